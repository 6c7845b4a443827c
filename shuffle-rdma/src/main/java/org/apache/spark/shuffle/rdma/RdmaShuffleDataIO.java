/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO;

/**
 * Spark's local-disk shuffle IO (the sort shuffle's writers and files, unchanged) whose
 * driver side says whether map outputs outlive their executor: with a node service
 * (spark.shuffle.rdma.service.socket) they do, so Spark keeps their map statuses when an
 * executor goes and dynamic allocation needs neither the external shuffle service nor
 * shuffle tracking. Set {@code spark.shuffle.sort.io.plugin.class} to this class; Spark reads
 * it before it creates the shuffle manager, so the manager cannot set it.
 */
public final class RdmaShuffleDataIO implements ShuffleDataIO {
  /** Spark's key naming the ShuffleDataIO class. */
  static final String PLUGIN_CLASS_KEY = "spark.shuffle.sort.io.plugin.class";

  private final SparkConf conf;
  private final LocalDiskShuffleDataIO localDisk;

  public RdmaShuffleDataIO(SparkConf conf) {
    this.conf = conf;
    this.localDisk = new LocalDiskShuffleDataIO(conf);
  }

  @Override
  public ShuffleExecutorComponents executor() {
    return localDisk.executor();
  }

  @Override
  public ShuffleDriverComponents driver() {
    return new RdmaShuffleDriverComponents(RdmaShuffleDriverComponents.handsOver(conf));
  }
}
