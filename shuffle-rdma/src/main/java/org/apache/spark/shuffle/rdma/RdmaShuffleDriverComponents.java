/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDriverComponents;

/**
 * The driver's side of {@link RdmaShuffleDataIO}: Spark's local-disk components (which send
 * RemoveShuffle to the block managers) that answer {@link #supportsReliableStorage()} true
 * when executors hand their map outputs to a node service. Spark then neither unregisters an
 * executor's outputs when it loses the executor (DAGScheduler) nor asks dynamic allocation
 * for an external shuffle service or shuffle tracking (ExecutorAllocationManager). An output
 * the service could not take is served by its executor and fails its reads once the
 * executor is gone; Spark recomputes it on that fetch failure.
 */
final class RdmaShuffleDriverComponents extends LocalDiskShuffleDriverComponents {
  private final boolean reliable;

  RdmaShuffleDriverComponents(boolean reliable) {
    this.reliable = reliable;
  }

  /** Whether executors hand their outputs to a node service (RdmaShuffleConf says). */
  static boolean handsOver(SparkConf conf) {
    return new RdmaShuffleConf(conf).handsOverToService();
  }

  @Override
  public boolean supportsReliableStorage() {
    return reliable;
  }
}
