/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** What this executor's reducers fetched through the transport (the plugin's own counters). */
public final class ReaderStats {
  public final AtomicLong fetchCalls = new AtomicLong();
  public final AtomicLong remoteBlocks = new AtomicLong();
  public final AtomicLong remoteBytes = new AtomicLong();
  /** READs of map-output indexes: one per output and executor while the cache holds it. */
  public final AtomicLong indexReads = new AtomicLong();
  public final AtomicLong dataReads = new AtomicLong();
  /** Blocks whose failure reached Spark (after any retries): each a fetch failure. */
  public final AtomicLong failedBlocks = new AtomicLong();
  /** Block reads that failed in one attempt (a retried block may count more than once). */
  public final AtomicLong blockReadFailures = new AtomicLong();
  /**
   * Attempts of a fetch started again after a curable failure (spark.shuffle.io.maxRetries,
   * spark.shuffle.io.retryWait): a lost connection, a transport retry error, a timeout.
   */
  public final AtomicLong fetchRetries = new AtomicLong();
  public final AtomicLong blocksToDisk = new AtomicLong();
  /** Blocks with no registration where Spark expects them, fetched by Spark's own client. */
  public final AtomicLong fallbackBlocks = new AtomicLong();
  /**
   * Of those: blocks whose one-sided read failed because Spark had removed their executor
   * (this reader's directory was older than the removal), then fetched by Spark's client.
   */
  public final AtomicLong removedExecutorBlocks = new AtomicLong();
  /** Fetches that read through the transport (one per fetchBlocks call with such blocks). */
  public final AtomicLong fetches = new AtomicLong();
  /**
   * Dependent rounds of those fetches: 1 for waiting on index loads (when any index was not
   * cached), plus 1 per batch of data READs posted at once (pieces of large blocks streaming
   * to disk, posted as earlier ones complete, are not rounds).
   */
  public final AtomicLong roundTrips = new AtomicLong();
  /** Fetches whose every index was cached when they started, and their rounds. */
  public final AtomicLong cachedFetches = new AtomicLong();
  public final AtomicLong cachedFetchRoundTrips = new AtomicLong();
  /** Blocks delivered as a slice of one READ shared with adjacent blocks. */
  public final AtomicLong coalescedBlocks = new AtomicLong();
  public final AtomicLong indexCacheEvictions = new AtomicLong();
  /** With verifyChecksums: blocks whose every partition matched the writer's checksum. */
  public final AtomicLong checksumVerifiedBlocks = new AtomicLong();
  public final AtomicLong checksumVerifiedBytes = new AtomicLong();
  /** Blocks failed because a partition's bytes differ from the writer's checksum. */
  public final AtomicLong checksumMismatches = new AtomicLong();
  /** Blocks read unverified because their output has no checksums (writer had them off). */
  public final AtomicLong checksumSkippedBlocks = new AtomicLong();
  /** Wall time spent computing checksums of in-memory blocks (pure CPU on a callback thread). */
  public final AtomicLong checksumNanos = new AtomicLong();
  /** Gauge: bytes the index cache holds now. */
  public final AtomicLong indexCacheBytes = new AtomicLong();

  public void addTo(Map<String, Long> m) {
    m.put("reader.fetchCalls", fetchCalls.get());
    m.put("reader.remoteBlocks", remoteBlocks.get());
    m.put("reader.remoteBytes", remoteBytes.get());
    m.put("reader.indexReads", indexReads.get());
    m.put("reader.dataReads", dataReads.get());
    m.put("reader.failedBlocks", failedBlocks.get());
    m.put("reader.blockReadFailures", blockReadFailures.get());
    m.put("reader.fetchRetries", fetchRetries.get());
    m.put("reader.blocksToDisk", blocksToDisk.get());
    m.put("reader.fallbackBlocks", fallbackBlocks.get());
    m.put("reader.removedExecutorBlocks", removedExecutorBlocks.get());
    m.put("reader.fetches", fetches.get());
    m.put("reader.roundTrips", roundTrips.get());
    m.put("reader.cachedFetches", cachedFetches.get());
    m.put("reader.cachedFetchRoundTrips", cachedFetchRoundTrips.get());
    m.put("reader.coalescedBlocks", coalescedBlocks.get());
    m.put("reader.indexCacheEvictions", indexCacheEvictions.get());
    m.put("reader.indexCacheBytes", indexCacheBytes.get());
    m.put("reader.checksumVerifiedBlocks", checksumVerifiedBlocks.get());
    m.put("reader.checksumVerifiedBytes", checksumVerifiedBytes.get());
    m.put("reader.checksumMismatches", checksumMismatches.get());
    m.put("reader.checksumSkippedBlocks", checksumSkippedBlocks.get());
    m.put("reader.checksumNanos", checksumNanos.get());
  }
}
