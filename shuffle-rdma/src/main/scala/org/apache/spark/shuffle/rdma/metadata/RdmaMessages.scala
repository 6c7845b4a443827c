package org.apache.spark.shuffle.rdma.metadata

import org.apache.spark.rpc.RpcEndpointRef
import org.apache.spark.shuffle.rdma.transport.PeerAddress

/** Messages between executors and the driver's RdmaMasterEndpoint (Spark RPC). */
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

private[rdma] case class ShuffleTable(
    table: Array[Byte],
    peers: Map[String, PeerAddress]) extends RdmaMessage

private[rdma] case class ForgetShuffle(shuffleId: Int) extends RdmaMessage

private[rdma] case object GetExecutorEndpoints extends RdmaMessage

private[rdma] case class ExecutorEndpoints(refs: Map[String, (String, RpcEndpointRef)])
  extends RdmaMessage

/** Driver to executor: report your counters. */
private[rdma] case object GetStats extends RdmaMessage

/**
 * A map task attempt that ran on `executorId` ended without success (failed or killed after
 * its output may have been committed and registered): Spark never tracks that output, so
 * the driver forgets its descriptor and the executor releases its registration.
 */
private[rdma] case class ReleaseUncommitted(shuffleId: Int, mapId: Long, executorId: String)
  extends RdmaMessage

/** Driver to executor: release the registration of this map output. */
private[rdma] case class ReleaseMapOutput(shuffleId: Int, mapId: Long) extends RdmaMessage
