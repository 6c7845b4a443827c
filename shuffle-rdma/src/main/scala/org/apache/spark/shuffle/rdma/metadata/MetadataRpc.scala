/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.util.function.Supplier

import scala.util.Try

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.rpc.RpcEndpointRef
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.transport.PeerAddress
import org.apache.spark.util.RpcUtils

/**
 * Java-facing calls of the metadata plane over Spark's RpcEnv (Scala ClassTags and
 * PartialFunctions would make these contorted in Java).
 */
object MetadataRpc {
  import RdmaMessages._

  /**
   * Starts the driver's endpoints (master, tables), and the listeners that tell it about map
   * task attempts that ended without success (so their registrations are released) and
   * about executors Spark removed (so readers stop resolving outputs to them). Returns the master,
   * which the driver calls directly for what only the driver may do (register and forget
   * shuffles, list executors). Executor ids are bound to their RPC connection's address,
   * or to its host alone when Spark may open several connections per executor
   * (`spark.rpc.io.numConnectionsPerPeer` above 1; see ExecutorBinding). `totals` keeps the
   * driver's sums over executors (a removed executor's counters stay in them).
   */
  def startMaster(env: SparkEnv, totals: ClusterTotals): RdmaMasterEndpoint = {
    val hostOnly = env.conf.getInt("spark.rpc.io.numConnectionsPerPeer", 1) > 1
    val master = new RdmaMasterEndpoint(env.rpcEnv, new ExecutorBinding(hostOnly), totals)
    env.rpcEnv.setupEndpoint(RdmaMasterEndpoint.NAME, master)
    env.rpcEnv.setupEndpoint(RdmaTableEndpoint.NAME, new RdmaTableEndpoint(env.rpcEnv, master))
    SparkContext.getActive.foreach { sc =>
      sc.addSparkListener(new UncommittedOutputListener(master))
      sc.addSparkListener(new ExecutorRemovedListener(master))
    }
    master
  }

  def masterRef(env: SparkEnv): RpcEndpointRef =
    RpcUtils.makeDriverRef(RdmaMasterEndpoint.NAME, env.conf, env.rpcEnv)

  /** Where executors ask for tables (see RdmaTableEndpoint). */
  def tablesRef(env: SparkEnv): RpcEndpointRef =
    RpcUtils.makeDriverRef(RdmaTableEndpoint.NAME, env.conf, env.rpcEnv)

  /** Starts this executor's stats endpoint and announces its transport to the driver. */
  def registerTransport(
      env: SparkEnv,
      master: RpcEndpointRef,
      transport: String,
      peer: PeerAddress,
      stats: Supplier[java.util.Map[String, java.lang.Long]],
      release: MapOutputReleaser): Unit = {
    val name = s"rdma-shuffle-executor-${env.executorId}"
    val ref = env.rpcEnv.setupEndpoint(name, new RdmaExecutorEndpoint(env.rpcEnv, stats, release))
    registerTransport(master, env.executorId, transport, peer, ref)
  }

  /** Announces an executor's transport; `ref` answers stats queries and release requests. */
  def registerTransport(master: RpcEndpointRef, executorId: String, transport: String,
      peer: PeerAddress, ref: RpcEndpointRef): Unit =
    master.askSync[Boolean](RegisterTransport(executorId, transport, peer, ref))

  def publish(master: RpcEndpointRef, shuffleId: Int, mapId: Long, entry: Array[Byte]): Unit =
    master.askSync[Boolean](PublishMapOutput(shuffleId, mapId, entry))

  /** Publishes a handed-over output: `entry` names the node service, `publisher` is this executor. */
  def publishHandedOver(master: RpcEndpointRef, shuffleId: Int, mapId: Long, publisher: String,
      entry: Array[Byte]): Unit =
    master.askSync[Boolean](PublishHandedOver(shuffleId, mapId, publisher, entry))

  /** Announces the node service executor `executorId` hands outputs to (once per service). */
  def registerNodeService(master: RpcEndpointRef, executorId: String, peer: PeerAddress): Unit =
    master.askSync[Boolean](RegisterNodeService(executorId, peer))

  /**
   * The records of a shuffle's table after log offset `since` (0 for all), and the executor
   * directory unless `peersVersion` is already the driver's.
   */
  def fetchTable(tables: RpcEndpointRef, shuffleId: Int, since: Long,
      peersVersion: Long): ShuffleTable =
    ShuffleTable.fromWire(
      tables.askSync[ShuffleTable.Wire](GetShuffleTable(shuffleId, since, peersVersion)))

  /** The directory in a reply, or null when the asker's version was current. */
  def peersOf(table: ShuffleTable): java.util.Map[String, PeerAddress] =
    table.peers.map(_.asJava).orNull

  /**
   * Counters of every executor that started a transport, keyed by executor id (among them
   * "transport.verbs", 1 when that executor reads with RDMA READ, from TransportStats). Executors that are gone
   * (killed, decommissioned, released by dynamic allocation) are left out. Every reply is
   * also the executor's latest report for the master's ClusterTotals. Driver only.
   */
  def clusterStats(master: RdmaMasterEndpoint)
      : java.util.Map[String, java.util.Map[String, java.lang.Long]] = {
    val totals = master.clusterTotals
    // Started before the executors are listed: a removal after this may race a reply.
    val poll = totals.pollStarted()
    try {
      master.executorEndpoints.flatMap { case (id, (_, ref)) =>
        Try(ref.askSync[Map[String, Long]](GetStats)).toOption.map { counters =>
          val stats = counters.map { case (k, v) => k -> java.lang.Long.valueOf(v) }.asJava
          totals.report(id, stats)
          id -> stats
        }
      }.asJava
    } finally totals.pollEnded(poll)
  }

  /**
   * What the driver's "rdmaShuffleCluster" source exports, after asking every live executor
   * (clusterStats): counters summed over every executor the application had (removed ones as
   * last reported), gauges over the live ones, and "executors" (see ClusterTotals).
   */
  def clusterTotals(master: RdmaMasterEndpoint): java.util.Map[String, java.lang.Long] = {
    clusterStats(master)
    master.clusterTotals.totals()
  }
}
