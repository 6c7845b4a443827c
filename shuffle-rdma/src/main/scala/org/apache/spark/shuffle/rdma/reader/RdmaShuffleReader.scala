/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader

import scala.collection

import org.apache.spark.{InterruptibleIterator, SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.io.CompressionCodec
import org.apache.spark.network.shuffle.BlockStoreClient
import org.apache.spark.shuffle.{BaseShuffleHandle, FetchFailedException, ShuffleReader, ShuffleReadMetricsReporter}
import org.apache.spark.storage.{BlockId, BlockManagerId, ShuffleBlockBatchId, ShuffleBlockFetcherIterator, ShuffleBlockId}
import org.apache.spark.util.CompletionIterator
import org.apache.spark.util.collection.ExternalSorter

/**
 * Reads a range of map outputs and reduce partitions. Spark's ShuffleBlockFetcherIterator
 * does the fetching, with this plugin's BlockStoreClient for remote blocks; the rest
 * (deserialize, count, combine, sort) is what any Spark shuffle reader must do. Scala
 * because the fetcher's constructor and the iterator plumbing are Scala APIs.
 */
private[rdma] class RdmaShuffleReader[K, C](
    handle: BaseShuffleHandle[K, _, C],
    blocksByAddress: Iterator[(BlockManagerId, collection.Seq[(BlockId, Long, Int)])],
    context: TaskContext,
    readMetrics: ShuffleReadMetricsReporter,
    client: BlockStoreClient,
    batchFetchRequested: Boolean,
    local: LocalOutputCheck)
  extends ShuffleReader[K, C] {

  private val dep = handle.dependency

  /** Contiguous partitions of one map output can be fetched as one block only if the
   * serialized streams of adjacent partitions concatenate (SPARK-34790, SPARK-9973). */
  private def batchFetch: Boolean = {
    val conf = SparkEnv.get.conf
    val concatenates = !conf.get(config.SHUFFLE_COMPRESS) ||
      CompressionCodec.supportsConcatenationOfSerializedStreams(CompressionCodec.createCodec(conf))
    batchFetchRequested && dep.serializer.supportsRelocationOfSerializedObjects &&
      concatenates && !conf.get(config.SHUFFLE_USE_OLD_FETCH_PROTOCOL) &&
      !conf.get(config.IO_ENCRYPTION_ENABLED)
  }

  /**
   * Spark reads this executor's own blocks from the files, and a file truncated under its
   * registration reads as fewer records with no error. Checked here (one stat per local map
   * output) and turned into a fetch failure, so Spark recomputes the output. With
   * verifyChecksums each local block is then checked against the writer's checksums too
   * (from the registered mappings), as the client checks remote blocks.
   */
  private def checkLocalOutputs(
      blocks: collection.Seq[(BlockManagerId, collection.Seq[(BlockId, Long, Int)])]): Unit = {
    val localId = SparkEnv.get.blockManager.blockManagerId
    val checked = new java.util.HashSet[java.lang.Long]()
    for ((address, ids) <- blocks if address.executorId == localId.executorId;
         (id, _, mapIndex) <- ids) {
      val (shuffleId, mapId, startReduce, endReduce) = id match {
        case b: ShuffleBlockId => (b.shuffleId, b.mapId, b.reduceId, b.reduceId + 1)
        case b: ShuffleBlockBatchId => (b.shuffleId, b.mapId, b.startReduceId, b.endReduceId)
        case other => throw new IllegalStateException(s"not a shuffle block: $other")
      }
      // One stat per map output, not per block: a reader takes many blocks of one output.
      val problem = if (checked.add(mapId)) local.integrityProblem(shuffleId, mapId) else null
      if (problem != null) {
        throw new FetchFailedException(address, shuffleId, mapId, mapIndex, startReduce,
          s"local map output changed under its registration: $problem")
      }
      val mismatch = local.checksumProblem(id.name, shuffleId, mapId, startReduce, endReduce)
      if (mismatch != null) {
        throw new FetchFailedException(address, shuffleId, mapId, mapIndex, startReduce, mismatch)
      }
    }
  }

  override def read(): Iterator[Product2[K, C]] = {
    val env = SparkEnv.get
    val conf = env.conf
    val blocks = blocksByAddress.toSeq
    checkLocalOutputs(blocks)
    val streams = new ShuffleBlockFetcherIterator(
      context,
      client,
      env.blockManager,
      env.mapOutputTracker,
      blocks.iterator,
      env.serializerManager.wrapStream,
      conf.get(config.REDUCER_MAX_SIZE_IN_FLIGHT) * 1024 * 1024,
      conf.get(config.REDUCER_MAX_REQS_IN_FLIGHT),
      conf.get(config.REDUCER_MAX_BLOCKS_IN_FLIGHT_PER_ADDRESS),
      conf.get(config.MAX_REMOTE_BLOCK_SIZE_FETCH_TO_MEM),
      conf.get(config.SHUFFLE_MAX_ATTEMPTS_ON_NETTY_OOM),
      conf.get(config.SHUFFLE_DETECT_CORRUPT),
      conf.get(config.SHUFFLE_DETECT_CORRUPT_MEMORY),
      conf.get(config.SHUFFLE_CHECKSUM_ENABLED),
      conf.get(config.SHUFFLE_CHECKSUM_ALGORITHM),
      readMetrics,
      batchFetch).toCompletionIterator

    val serializer = dep.serializer.newInstance()
    val records = streams.flatMap { case (_, in) =>
      serializer.deserializeStream(in).asKeyValueIterator
    }
    val counted = CompletionIterator[(Any, Any), Iterator[(Any, Any)]](
      records.map { r => readMetrics.incRecordsRead(1); r },
      context.taskMetrics().mergeShuffleReadMetrics())
    val input = new InterruptibleIterator[(Any, Any)](context, counted)

    val result = dep.keyOrdering match {
      case Some(ordering) => sorted(input, ordering)
      case None => combined(input)
    }
    result match {
      case i: InterruptibleIterator[Product2[K, C]] => i
      case other => new InterruptibleIterator[Product2[K, C]](context, other)
    }
  }

  /** Applies the dependency's aggregator, if any, without ordering. */
  private def combined(input: Iterator[(Any, Any)]): Iterator[Product2[K, C]] =
    dep.aggregator match {
      case Some(agg) if dep.mapSideCombine =>
        agg.combineCombinersByKey(input.asInstanceOf[Iterator[(K, C)]], context)
      case Some(agg) =>
        agg.combineValuesByKey(input.asInstanceOf[Iterator[(K, Nothing)]], context)
      case None =>
        input.asInstanceOf[Iterator[Product2[K, C]]]
    }

  /** Sorts by key, merging values with the aggregator on the way when there is one. */
  private def sorted(input: Iterator[(Any, Any)], ordering: Ordering[K])
      : Iterator[Product2[K, C]] = {
    val merge: Option[org.apache.spark.Aggregator[K, Any, C]] = dep.aggregator.map { agg =>
      if (dep.mapSideCombine) {
        new org.apache.spark.Aggregator[K, C, C](identity, agg.mergeCombiners, agg.mergeCombiners)
          .asInstanceOf[org.apache.spark.Aggregator[K, Any, C]]
      } else {
        agg.asInstanceOf[org.apache.spark.Aggregator[K, Any, C]]
      }
    }
    val sorter = new ExternalSorter[K, Any, C](context, merge, ordering = Some(ordering),
      serializer = dep.serializer)
    sorter.insertAllAndUpdateMetrics(input.asInstanceOf[Iterator[(K, Nothing)]])
  }
}
