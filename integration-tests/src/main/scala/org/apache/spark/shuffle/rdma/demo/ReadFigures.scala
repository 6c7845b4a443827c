/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo

/**
 * The read path's cost per block and per fetch, from the plugin's counters summed over
 * executors: what the demo and the benchmark print, and what the benchmark asserts.
 */
final case class ReadFigures(total: collection.Map[String, Long]) {
  private def get(k: String): Long = total.getOrElse(k, 0L)
  val index: Long = get("reader.indexReads")
  val data: Long = get("reader.dataReads")
  val blocks: Long = get("reader.remoteBlocks")
  val fetches: Long = get("reader.fetches")
  val cachedFetches: Long = get("reader.cachedFetches")
  /** (index + data READs) / remote blocks; 0 when no block was fetched. */
  def readsPerBlock: Double = if (blocks == 0) 0.0 else (index + data).toDouble / blocks
  def roundTripsPerFetch: Double =
    if (fetches == 0) 0.0 else get("reader.roundTrips").toDouble / fetches
  def roundTripsPerCachedFetch: Double =
    if (cachedFetches == 0) 0.0 else get("reader.cachedFetchRoundTrips").toDouble / cachedFetches
}
