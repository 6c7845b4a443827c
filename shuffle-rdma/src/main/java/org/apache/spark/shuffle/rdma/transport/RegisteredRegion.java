/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

/**
 * Memory registered for remote READ. {@link #address()} and {@link #key()} are what a
 * reader needs; both are published, nothing else is. On verbs the key is the memory
 * region's rkey (never the lkey) and the address its virtual address; on tcp the address
 * space of each region starts at 0 and the key is a random capability.
 */
public interface RegisteredRegion {

  /** Remote address of the region's first byte. */
  long address();

  /** Registered length in bytes (at most 1 GiB). */
  long length();

  /** Remote key that authorizes reads of this region. */
  int key();

  /** True until the region is deregistered. */
  boolean isLive();
}
