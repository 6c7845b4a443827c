package org.apache.spark.shuffle.rdma.metadata

import org.apache.spark.rpc.RpcEndpointRef
import org.apache.spark.shuffle.rdma.transport.PeerAddress

/**
 * Messages between executors and the driver's RdmaMasterEndpoint (Spark RPC).
 *
 * What an executor receives (replies to its asks, and messages to its endpoint) is made of
 * JDK and Scala library types only: an executor's RpcEnv decodes them on its network threads
 * with the class loader it started with, which may not see the plugin's classes when the
 * plugin came with --jars. The case classes below travel only towards the driver.
 */
private[rdma] sealed trait RdmaMessage extends Serializable

/** An executor's transport is up: where it serves, and its endpoint for stats queries. */
private[rdma] case class RegisterTransport(
    executorId: String,
    transport: String,
    peer: PeerAddress,
    ref: RpcEndpointRef) extends RdmaMessage

/** A map output is registered; `entry` is DescriptorCodec.encodeEntry of its descriptor. */
private[rdma] case class PublishMapOutput(shuffleId: Int, mapId: Long, entry: Array[Byte])
  extends RdmaMessage

/** Ask for every descriptor of a shuffle and the serving address of every executor. */
private[rdma] case class GetShuffleTable(shuffleId: Int) extends RdmaMessage

/** A shuffle's table as the reader uses it; on the wire it is ShuffleTable.Wire. */
private[rdma] case class ShuffleTable(
    table: Array[Byte],
    peers: Map[String, PeerAddress])

private[rdma] object ShuffleTable {
  /** (encoded descriptors, executor id -> (host, port)): JDK and Scala types only. */
  type Wire = (Array[Byte], Map[String, (String, Int)])

  def toWire(t: ShuffleTable): Wire =
    (t.table, t.peers.map { case (id, p) => id -> ((p.host, p.port)) })

  def fromWire(w: Wire): ShuffleTable =
    ShuffleTable(w._1, w._2.map { case (id, (host, port)) => id -> new PeerAddress(host, port) })
}

private[rdma] case class ForgetShuffle(shuffleId: Int) extends RdmaMessage

private[rdma] case object GetExecutorEndpoints extends RdmaMessage

private[rdma] case class ExecutorEndpoints(refs: Map[String, (String, RpcEndpointRef)])
  extends RdmaMessage

/** Driver to executor: report your counters (a String, see above). */
private[rdma] object ExecutorMessages {
  val GetStats = "spark-shuffle-rdma:get-stats"
  val ReleaseMapOutput = "spark-shuffle-rdma:release-map-output"
}

/**
 * A map task attempt that ran on `executorId` ended without success (failed or killed after
 * its output may have been committed and registered): Spark never tracks that output, so
 * the driver forgets its descriptor and the executor releases its registration.
 */
private[rdma] case class ReleaseUncommitted(shuffleId: Int, mapId: Long, executorId: String)
  extends RdmaMessage

