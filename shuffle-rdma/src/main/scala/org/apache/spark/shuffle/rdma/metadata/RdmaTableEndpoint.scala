/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.lang.management.ManagementFactory

import org.apache.spark.rpc.{IsolatedRpcEndpoint, RpcCallContext, RpcEnv}

/**
 * Driver side: answers GetShuffleTable from the master's state, on threads of its own
 * (IsolatedRpcEndpoint), concurrently (not thread-safe-serialized: each reply is built from
 * immutable chunks under a short lock, then serialized and sent without one). Kept apart from
 * RdmaMasterEndpoint so that publishes and registrations never queue behind table replies,
 * and apart from Spark's shared dispatcher threads so Spark's own endpoints never do either.
 * An `observer` (MetadataScaleSimulation's) is told each request's service time.
 */
private[rdma] class RdmaTableEndpoint(
    override val rpcEnv: RpcEnv,
    master: RdmaMasterEndpoint,
    observer: TableServiceObserver = null)
  extends IsolatedRpcEndpoint {
  import RdmaMessages._

  /** One thread serializes while another's reply is being written out; at most 4. */
  override def threadCount(): Int =
    math.max(2, math.min(4, Runtime.getRuntime.availableProcessors()))

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case GetShuffleTable(shuffleId, since, knownPeers) =>
      if (observer == null) {
        context.reply(master.table(shuffleId, since, knownPeers))
      } else {
        val threads = ManagementFactory.getThreadMXBean
        val cpu = threads.getCurrentThreadCpuTime
        val wall = System.nanoTime()
        context.reply(master.table(shuffleId, since, knownPeers)) // serializes here
        observer.served(threads.getCurrentThreadCpuTime - cpu, System.nanoTime() - wall)
      }
  }
}

private[rdma] object RdmaTableEndpoint {
  val NAME = "rdma-shuffle-tables"
}
