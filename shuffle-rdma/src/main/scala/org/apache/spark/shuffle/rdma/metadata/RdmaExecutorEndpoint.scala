package org.apache.spark.shuffle.rdma.metadata

import java.util.function.Supplier

import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

import org.apache.spark.rpc.{RpcCallContext, RpcEnv, ThreadSafeRpcEndpoint}

/** Executor side: answers the driver's stats queries (tests, demo, benchmarks). */
private[rdma] class RdmaExecutorEndpoint(
    override val rpcEnv: RpcEnv,
    stats: Supplier[java.util.Map[String, java.lang.Long]]) extends ThreadSafeRpcEndpoint {

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case GetStats =>
      context.reply(stats.get().asScala.map { case (k, v) => k -> v.longValue() }.toMap)
  }
}
