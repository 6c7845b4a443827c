package org.apache.spark.shuffle.rdma.metadata

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.rpc.{RpcCallContext, RpcEndpointRef, RpcEnv, ThreadSafeRpcEndpoint}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.transport.PeerAddress

/**
 * Driver side of the metadata plane: the endpoint directory (executor -> transport address)
 * and, per shuffle, the descriptor of every registered map output. A reducer executor asks
 * once per shuffle (and again only when it meets a map output it has not seen, e.g. after a
 * stage retry), so metadata round trips are O(1) per (reducer executor, shuffle).
 */
private[rdma] class RdmaMasterEndpoint(override val rpcEnv: RpcEnv)
  extends ThreadSafeRpcEndpoint {

  import RdmaMessages._

  private case class Registered(transport: String, peer: PeerAddress, ref: RpcEndpointRef)

  private val transports = new ConcurrentHashMap[String, Registered]()
  private val tables = new ConcurrentHashMap[Int, ConcurrentHashMap[Long, Array[Byte]]]()

  override def receive: PartialFunction[Any, Unit] = {
    case ReleaseUncommitted(shuffleId, mapId, executorId) =>
      // Map ids are task attempt ids, unique in the application: this entry is that attempt's.
      Option(tables.get(shuffleId)).foreach(_.remove(mapId))
      Option(transports.get(executorId)).foreach { r =>
        try r.ref.send(ReleaseMapOutput(shuffleId, mapId)) catch {
          case NonFatal(_) => // executor gone: its registrations went with it
        }
      }
  }

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case RegisterTransport(executorId, transport, peer, ref) =>
      transports.put(executorId, Registered(transport, peer, ref))
      context.reply(true)

    case PublishMapOutput(shuffleId, mapId, entry) =>
      tables.computeIfAbsent(shuffleId, _ => new ConcurrentHashMap[Long, Array[Byte]]())
        .put(mapId, entry)
      context.reply(true)

    case GetShuffleTable(shuffleId) =>
      val entries = Option(tables.get(shuffleId)).map(_.values().asScala.toSeq).getOrElse(Nil)
      val peers = transports.asScala.map { case (id, r) => id -> r.peer }.toMap
      context.reply(ShuffleTable.wire(DescriptorCodec.table(entries.asJava), peers))

    case ForgetShuffle(shuffleId) =>
      tables.remove(shuffleId)
      context.reply(true)

    case GetExecutorEndpoints =>
      context.reply(transports.asScala.map { case (id, r) => id -> ((r.transport, r.ref)) }.toMap)
  }

  /** Number of shuffles with published outputs (for tests of cleanup). */
  def shuffleCount: Int = tables.size()
}

private[rdma] object RdmaMasterEndpoint {
  val NAME = "rdma-shuffle-master"
}
