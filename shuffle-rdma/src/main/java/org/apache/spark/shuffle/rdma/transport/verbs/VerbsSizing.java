/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

/**
 * Sizes the verbs transport derives from configuration and the device (pure arithmetic,
 * kept out of the DiSNI-linked classes so it is unit-tested without a device).
 */
public final class VerbsSizing {
  private VerbsSizing() {}

  /**
   * Longest single READ: a quarter of the receive pool (so several pieces of one large
   * block are in flight at once and other reads still find memory), at most
   * {@code maxReadSize}, a power of two (the pool's buddy allocator rounds every read up to
   * one) and at least one allocator block.
   */
  public static int maxReadLength(long poolCapacity, long maxReadSize) {
    long quarter = Math.max(poolCapacity / 4, BuddyAllocator.MIN_BLOCK);
    long limit = Math.max(Long.highestOneBit(maxReadSize), BuddyAllocator.MIN_BLOCK);
    return (int) Math.min(Math.min(quarter, limit), 1L << 30);
  }
}
