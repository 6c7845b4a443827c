/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.spark.rpc.{RpcAddress, RpcCallContext, RpcEndpointRef, RpcEnv,
  ThreadSafeRpcEndpoint}
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
 *
 * What an executor may send is checked by a MetadataGuard (docs/security.md): its own
 * RegisterTransport (an executor id is bound to the RPC sender that registered it first) and
 * PublishMapOutput of its own outputs, with the partition count of a shuffle the driver
 * registered (`shuffleRegistered`). What only the driver does (forget a shuffle, release an
 * uncommitted attempt's output, list the executors' endpoints) are method calls in the
 * driver's JVM; the same requests arriving over RPC are refused.
 */
private[rdma] class RdmaMasterEndpoint(override val rpcEnv: RpcEnv, binding: ExecutorBinding,
    val clusterTotals: ClusterTotals)
  extends ThreadSafeRpcEndpoint {

  /**
   * Binds executor ids to full sender addresses (one RPC connection per executor); totals with
   * no counter kept after its executor left (the metrics catalog is the plugin's, not this
   * package's: MetadataRpc.startMaster is given the real ones).
   */
  def this(rpcEnv: RpcEnv) = this(rpcEnv, new ExecutorBinding(false),
    new ClusterTotals(_ => false, m => ClusterTotals.plainSum(m)))

  import RdmaMessages._

  private case class Registered(transport: String, peer: PeerAddress, ref: RpcEndpointRef)

  private val transports = new ConcurrentHashMap[String, Registered]()
  /**
   * Node services executors handed outputs to, by NodeServiceId: in the directory beside the
   * executors, and never dropped by an executor's removal (that is what they are for).
   */
  private val services = new ConcurrentHashMap[String, PeerAddress]()
  private val tables = new ConcurrentHashMap[Int, DescriptorLog]()

  /** Directory version, bumped on every registration; the snapshot is rebuilt once per bump. */
  private var peersVersion = 0L
  private var peersSnapshot: (Long, Map[String, (String, Int)]) = (0L, Map.empty)

  private val tableRequests = new AtomicLong()
  private val tableBytesServed = new AtomicLong()
  private val directoriesServed = new AtomicLong()

  val guard = new MetadataGuard(binding)


  override def receive: PartialFunction[Any, Unit] = {
    case DriverOnly(what) => guard.driverOnly(what, null) // counted, logged at a bounded rate
  }

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case RegisterTransport(executorId, transport, peer, ref) => checked(context) { from =>
      synchronized {
        // Checked under the lock executorRemoved takes: a removed executor stays out.
        guard.registerTransport(executorId, from.host, from.port)
        transports.put(executorId, Registered(transport, peer, ref))
        peersVersion += 1
      }
    }

    case RegisterNodeService(executorId, peer) => checked(context) { from =>
      guard.registerService(executorId, from.host, from.port)
      val id = NodeServiceId.of(peer)
      synchronized {
        if (services.put(id, peer) == null) {
          peersVersion += 1
        }
      }
    }

    case PublishHandedOver(shuffleId, mapId, publisher, entry) => checked(context) { from =>
      val record = guard.handedOverRecord(shuffleId, mapId, publisher, entry, from.host,
        from.port, (id: String) => services.containsKey(id))
      tables.computeIfAbsent(shuffleId, _ => new DescriptorLog()).append(record)
    }

    case PublishMapOutput(shuffleId, mapId, entry) => checked(context) { from =>
      val record = guard.publishedRecord(shuffleId, mapId, entry, from.host, from.port)
      tables.computeIfAbsent(shuffleId, _ => new DescriptorLog()).append(record)
    }

    case DriverOnly(what) =>
      context.sendFailure(guard.driverOnly(what, String.valueOf(context.senderAddress)))
  }

  /**
   * Runs `body` with the sender's address and replies true, or the guard's refusal as a
   * failure. A refusal is answered here, not thrown: Spark's Inbox would log each thrown one
   * with its stack trace, and the guard already logs refusals at a bounded rate.
   */
  private def checked(context: RpcCallContext)(body: RpcAddress => Unit): Unit = {
    val from = Option(context.senderAddress).getOrElse(RpcAddress("unknown", -1))
    try {
      body(from)
      context.reply(true)
    } catch {
      case e @ (_: SecurityException | _: IllegalArgumentException) => context.sendFailure(e)
    }
  }

  /** Driver only: shuffle `shuffleId` has `numPartitions` partitions; publishes may follow. */
  def shuffleRegistered(shuffleId: Int, numPartitions: Int): Unit =
    guard.shuffleRegistered(shuffleId, numPartitions)

  /** Driver only: drops a shuffle's table; later publishes for it are refused. */
  def forget(shuffleId: Int): Unit = {
    guard.shuffleForgotten(shuffleId)
    tables.remove(shuffleId)
  }

  /**
   * Driver only (UncommittedOutputListener): a map task attempt that ran on `executorId`
   * ended without success; forget its descriptor and have the executor release it.
   */
  def releaseUncommitted(shuffleId: Int, mapId: Long, executorId: String): Unit = {
    // Map ids are task attempt ids, unique in the application: this entry is that attempt's.
    Option(tables.get(shuffleId)).foreach(_.append(DescriptorCodec.releasedRecord(mapId)))
    Option(transports.get(executorId)).foreach { r =>
      try r.ref.send(ReleaseMapOutput(shuffleId, mapId)) catch {
        case NonFatal(_) => // executor gone: its registrations went with it
      }
    }
  }

  /**
   * Driver only (ExecutorRemovedListener): Spark removed `executorId` (released by dynamic
   * allocation, decommissioned, lost). It leaves the directory, so every reader treats its
   * outputs as unregistered: blocks Spark still lists on it (served by an external shuffle
   * service) are fetched through Spark's own client, and a reader holding an older copy of
   * the directory learns it when its read fails (ShuffleTableCache.departed). The guard
   * refuses it from now on, so no sender can register or publish as it again. Its
   * descriptors' bytes stay in the append-only logs until their shuffles are unregistered;
   * without a directory entry they resolve to nothing. The outputs it handed over to its
   * node service are not its to lose: the service stays in the directory, so they keep
   * resolving there (ShuffleTableCache) and Spark keeps their map statuses
   * (RdmaShuffleDriverComponents.supportsReliableStorage). Its counters as last reported
   * stay in the driver's sums, its gauges leave them (ClusterTotals): after it left the
   * directory, so a poll that starts later does not ask it.
   */
  def executorRemoved(executorId: String): Unit = synchronized {
    guard.executorRemoved(executorId)
    if (transports.remove(executorId) != null) {
      peersVersion += 1
    }
    clusterTotals.removed(executorId)
  }

  /** Driver only: executor id -> (transport name, stats endpoint) of every registered one. */
  def executorEndpoints: Map[String, (String, RpcEndpointRef)] =
    transports.asScala.map { case (id, r) => id -> ((r.transport, r.ref)) }.toMap

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
        transports.asScala.map { case (id, r) => id -> ((r.peer.host, r.peer.port)) }.toMap ++
        services.asScala.map { case (id, p) => id -> ((p.host, p.port)) })
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
