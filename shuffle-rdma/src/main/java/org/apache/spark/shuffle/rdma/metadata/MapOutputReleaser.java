/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

/** Executor side: releases the registration of one map output the driver says is unread. */
@FunctionalInterface
public interface MapOutputReleaser {
  void release(int shuffleId, long mapId);
}
