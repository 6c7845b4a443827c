/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.util.function.Supplier

import org.apache.spark.rpc.{RpcCallContext, RpcEnv, ThreadSafeRpcEndpoint}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

/**
 * Executor side: answers the driver's stats queries (tests, demo, benchmarks) and releases
 * registrations the driver knows Spark will never read.
 */
private[rdma] class RdmaExecutorEndpoint(
    override val rpcEnv: RpcEnv,
    stats: Supplier[java.util.Map[String, java.lang.Long]],
    release: MapOutputReleaser) extends ThreadSafeRpcEndpoint {
  import RdmaMessages._

  override def receive: PartialFunction[Any, Unit] = {
    case ReleaseMapOutput(shuffleId, mapId) => release.release(shuffleId, mapId)
  }

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case GetStats =>
      context.reply(stats.get().asScala.map { case (k, v) => k -> v.longValue() }.toMap)
  }
}
