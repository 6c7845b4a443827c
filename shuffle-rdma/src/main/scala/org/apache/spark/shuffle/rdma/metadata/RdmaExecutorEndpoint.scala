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

  override def receive: PartialFunction[Any, Unit] = {
    case (ExecutorMessages.ReleaseMapOutput, shuffleId: Int, mapId: Long) =>
      release.release(shuffleId, mapId)
  }

  override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
    case ExecutorMessages.GetStats =>
      context.reply(stats.get().asScala.map { case (k, v) => k -> v.longValue() }.toMap)
  }
}
