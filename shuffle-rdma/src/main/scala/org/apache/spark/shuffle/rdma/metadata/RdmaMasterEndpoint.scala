/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.spark.rpc.{RpcCallContext, RpcEndpointRef, RpcEnv, ThreadSafeRpcEndpoint}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.transport.PeerAddress

/**
 * Driver side of the metadata plane: the endpoint directory (executor -> transport address)
 * and, per shuffle, the descriptor of every registered map output as a DescriptorLog. A
 * reducer executor asks once per shuffle for the whole table, and afterwards only for what
 * was appended since the version it holds, and only when a block's (map id, executor) pair
 * does not resolve in its copy (ShuffleTableCache).
 *
 * Table requests are not answered here but by RdmaTableEndpoint, on its own threads: a table
 * reply of megabytes is serialized on the thread that answers it, and queued behind a
 * thousand of them a publish would wait seconds (measured by MetadataScaleSimulation). Here
 * every message is short (a publish decodes and appends one record). Table bytes are
 * encoded once, by the publishing executor; replies reuse the log's immutable chunks.
 */
private[rdma] class RdmaMasterEndpoint(override val rpcEnv: RpcEnv)
  extends ThreadSafeRpcEndpoint {

  import RdmaMessages._

  private case class Registered(transport: String, peer: PeerAddress, ref: RpcEndpointRef)

  private val transports = new ConcurrentHashMap[String, Registered]()
  private val tables = new ConcurrentHashMap[Int, DescriptorLog]()

  /** Directory version, bumped on every registration; the snapshot is rebuilt once per bump. */
  private var peersVersion = 0L
  private var peersSnapshot: (Long, Map[String, (String, Int)]) = (0L, Map.empty)

  private val tableRequests = new AtomicLong()
  private val tableBytesServed = new AtomicLong()
  private val directoriesServed = new AtomicLong()

  override def receive: PartialFunction[Any, Unit] = {
    case ReleaseUncommitted(shuffleId, mapId, executorId) =>
      // Map ids are task attempt ids, unique in the application: this entry is that attempt's.
      Option(tables.get(shuffleId)).foreach(_.append(DescriptorCodec.releasedRecord(mapId)))
      Option(transports.get(executorId)).foreach { r =>
        try r.ref.send(ReleaseMapOutput(shuffleId, mapId)) catch {
          case NonFatal(_) => // executor gone: its registrations went with it
        }
      }
  }

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case RegisterTransport(executorId, transport, peer, ref) =>
      synchronized {
        transports.put(executorId, Registered(transport, peer, ref))
        peersVersion += 1
      }
      context.reply(true)

    case PublishMapOutput(shuffleId, mapId, entry) =>
      val record = DescriptorCodec.publishedRecord(shuffleId, mapId, entry)
      tables.computeIfAbsent(shuffleId, _ => new DescriptorLog()).append(record)
      context.reply(true)

    case ForgetShuffle(shuffleId) =>
      tables.remove(shuffleId)
      context.reply(true)

    case GetExecutorEndpoints =>
      context.reply(transports.asScala.map { case (id, r) => id -> ((r.transport, r.ref)) }.toMap)
  }

  /**
   * The reply to GetShuffleTable (see RdmaTableEndpoint): records after `since` and the
   * directory unless the asker holds version `knownPeers`. Thread-safe, O(chunks).
   */
  def table(shuffleId: Int, since: Long, knownPeers: Long): ShuffleTable.Wire = {
    val slice = Option(tables.get(shuffleId)).getOrElse(new DescriptorLog()).since(since)
    val (version, peers) = directory()
    val sendPeers = if (version == knownPeers) None else Some(peers)
    tableRequests.incrementAndGet()
    tableBytesServed.addAndGet(slice.bytes())
    if (sendPeers.isDefined) directoriesServed.incrementAndGet()
    ShuffleTable.wire(slice, version, sendPeers)
  }

  private def directory(): (Long, Map[String, (String, Int)]) = synchronized {
    if (peersSnapshot._1 != peersVersion) {
      peersSnapshot = (peersVersion,
        transports.asScala.map { case (id, r) => id -> ((r.peer.host, r.peer.port)) }.toMap)
    }
    peersSnapshot
  }

  /** Published bytes (the encoded table) of one shuffle, 0 if none. */
  def tableBytes(shuffleId: Int): Long = Option(tables.get(shuffleId)).map(_.length()).getOrElse(0L)

  /** Table requests answered, descriptor bytes and executor directories sent in them. */
  def tableRequestCount: Long = tableRequests.get()
  def tableBytesSent: Long = tableBytesServed.get()
  def directoriesSent: Long = directoriesServed.get()
}

private[rdma] object RdmaMasterEndpoint {
  val NAME = "rdma-shuffle-master"
}
