/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * Spark's next line routes shuffles to more than one manager (spark.shuffle.manager for
 * batch shuffles, spark.shuffle.manager.incremental for pipelined ones) and its id-only
 * cleanup calls unregisterShuffle on every manager, also for ids a manager never saw, and
 * possibly before SparkEnv is complete. Here: no SparkEnv at all, nothing started, driver and
 * executor side, before and after stop. The same on a live cluster is in RdmaShuffleSuite.
 */
class UnknownShuffleIdsTest {
  @Test
  void unregisteringAnIdNeverRegisteredIsANoOpWithoutSparkEnv() {
    for (boolean driver : new boolean[] {true, false}) {
      RdmaShuffleManager m = new RdmaShuffleManager(
          new SparkConf(false).set("spark.shuffle.rdma.transport", "tcp"), driver);
      assertTrue(m.unregisterShuffle(424242));
      assertTrue(m.unregisterShuffle(-1));
      assertTrue(m.localStats().isEmpty(), "nothing may start for an unknown id");
      m.stop();
      assertTrue(m.unregisterShuffle(424242), "after stop too");
    }
  }
}
