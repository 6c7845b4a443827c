/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import org.apache.spark.rpc.RpcEndpointRef
import org.apache.spark.shuffle.rdma.transport.PeerAddress

/**
 * Messages between executors and the driver's RdmaMasterEndpoint (Spark RPC).
 *
 * On the wire every message is a tuple tagged with a string and made of JDK, Scala and Spark
 * types only, never of the plugin's own classes: with `spark-submit --jars` (Spark 4) the
 * plugin's classes live in the executor's user class loader, while Spark's RPC deserializes
 * with the loader the RpcEnv was created with, which cannot see them (a plugin case class
 * arriving on an executor is a ClassNotFoundException that makes the executor exit). Each
 * object below builds its message (`apply`) and recognizes it (`unapply`), so endpoints
 * match on them as on case classes.
 */
private[rdma] object RdmaMessages {
  private val P = "rdma-shuffle."

  /** An executor's transport is up: where it serves, and its endpoint for stats queries. */
  object RegisterTransport {
    private val Tag = P + "registerTransport"
    def apply(executorId: String, transport: String, peer: PeerAddress,
        ref: RpcEndpointRef): AnyRef = (Tag, executorId, transport, peer.host, peer.port, ref)
    def unapply(m: Any): Option[(String, String, PeerAddress, RpcEndpointRef)] = m match {
      case (Tag, id: String, transport: String, host: String, port: Int, ref: RpcEndpointRef) =>
        Some((id, transport, new PeerAddress(host, port), ref))
      case _ => None
    }
  }

  /** A map output is registered; `entry` is DescriptorCodec.encodeEntry of its descriptor. */
  object PublishMapOutput {
    private val Tag = P + "publish"
    def apply(shuffleId: Int, mapId: Long, entry: Array[Byte]): AnyRef =
      (Tag, shuffleId, mapId, entry)
    def unapply(m: Any): Option[(Int, Long, Array[Byte])] = m match {
      case (Tag, shuffleId: Int, mapId: Long, entry: Array[Byte]) => Some((shuffleId, mapId, entry))
      case _ => None
    }
  }

  /**
   * Executor `publisher` handed a map output to its node service; `entry` is the service's
   * descriptor under the service's NodeServiceId.
   */
  object PublishHandedOver {
    private val Tag = P + "publishHandedOver"
    def apply(shuffleId: Int, mapId: Long, publisher: String, entry: Array[Byte]): AnyRef =
      (Tag, shuffleId, mapId, publisher, entry)
    def unapply(m: Any): Option[(Int, Long, String, Array[Byte])] = m match {
      case (Tag, shuffleId: Int, mapId: Long, publisher: String, entry: Array[Byte]) =>
        Some((shuffleId, mapId, publisher, entry))
      case _ => None
    }
  }

  /**
   * Executor `executorId` hands outputs to the node service readers reach at `peer`; the
   * driver lists it in the directory as NodeServiceId.of(peer), for as long as it runs.
   */
  object RegisterNodeService {
    private val Tag = P + "registerNodeService"
    def apply(executorId: String, peer: PeerAddress): AnyRef =
      (Tag, executorId, peer.host, peer.port)
    def unapply(m: Any): Option[(String, PeerAddress)] = m match {
      case (Tag, id: String, host: String, port: Int) => Some((id, new PeerAddress(host, port)))
      case _ => None
    }
  }

  /**
   * Ask for the records of a shuffle's table after byte offset `since` (0: the whole table;
   * otherwise the `to` of an earlier reply), and for the executor directory unless the asker
   * holds version `peersVersion` of it already. The reply is `ShuffleTable.Wire`.
   */
  object GetShuffleTable {
    private val Tag = P + "getTable"
    def apply(shuffleId: Int, since: Long, peersVersion: Long): AnyRef =
      (Tag, shuffleId, since, peersVersion)
    def unapply(m: Any): Option[(Int, Long, Long)] = m match {
      case (Tag, shuffleId: Int, since: Long, peersVersion: Long) =>
        Some((shuffleId, since, peersVersion))
      case _ => None
    }
  }

  /**
   * Requests that only the driver makes, of itself, by calling RdmaMasterEndpoint's methods
   * (forget a shuffle, release an uncommitted attempt's output, list executors' endpoints).
   * Earlier versions sent them as messages; the same tags arriving over RPC are refused.
   */
  object DriverOnly {
    private val Tags = Set(P + "forget", P + "getExecutorEndpoints", P + "releaseUncommitted")
    def unapply(m: Any): Option[String] = m match {
      case t: String if Tags(t) => Some(t)
      case p: Product if p.productArity > 0 && Tags(String.valueOf(p.productElement(0))) =>
        Some(String.valueOf(p.productElement(0)))
      case _ => None
    }
  }

  /** Driver to executor: report your counters. Reply: Map[String, Long]. */
  val GetStats: String = P + "getStats"

  /** Driver to executor: release the registration of this map output. */
  object ReleaseMapOutput {
    private val Tag = P + "release"
    def apply(shuffleId: Int, mapId: Long): AnyRef = (Tag, shuffleId, mapId)
    def unapply(m: Any): Option[(Int, Long)] = m match {
      case (Tag, shuffleId: Int, mapId: Long) => Some((shuffleId, mapId))
      case _ => None
    }
  }
}

/**
 * A reply to GetShuffleTable as the executor uses it (never sent as such): the table's log
 * bytes [from, to) in chunks (DescriptorCodec records), and the executor directory at
 * `peersVersion`, or None when the asker already holds that version.
 */
private[rdma] case class ShuffleTable(
    from: Long,
    to: Long,
    chunks: Array[Array[Byte]],
    peersVersion: Long,
    peers: Option[Map[String, PeerAddress]])

private[rdma] object ShuffleTable {
  /** JDK/Scala types only; a null directory means the asker holds that version already. */
  type Wire = (Long, Long, Array[Array[Byte]], Long, Map[String, (String, Int)])

  def wire(slice: DescriptorLog.Slice, peersVersion: Long,
      peers: Option[Map[String, (String, Int)]]): Wire =
    (slice.from, slice.to, slice.chunks, peersVersion, peers.orNull)

  def fromWire(w: Wire): ShuffleTable =
    ShuffleTable(w._1, w._2, w._3, w._4, Option(w._5).map(_.map { case (id, (host, port)) =>
      id -> new PeerAddress(host, port)
    }))
}
