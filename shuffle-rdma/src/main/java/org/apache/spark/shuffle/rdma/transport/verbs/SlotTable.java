/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import org.apache.spark.shuffle.rdma.transport.ReadRequest;

/**
 * The reads one connection has posted, indexed by slot; the slot number is the work
 * request id, so a completion finds its read without a map or an allocation. The table
 * size is the send queue depth, which bounds the reads in flight. Not thread-safe: the
 * channel guards it.
 */
public final class SlotTable {
  private final ReadRequest[] requests;
  private final long[] offsets;
  private final long[] postedAt;
  private final int[] freeStack;
  private int freeCount;

  public SlotTable(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    requests = new ReadRequest[capacity];
    offsets = new long[capacity];
    postedAt = new long[capacity];
    freeStack = new int[capacity];
    for (int i = 0; i < capacity; i++) {
      freeStack[i] = capacity - 1 - i;
    }
    freeCount = capacity;
  }

  public int capacity() {
    return requests.length;
  }

  public boolean hasFree() {
    return freeCount > 0;
  }

  public int inFlight() {
    return requests.length - freeCount;
  }

  /** Takes a free slot for {@code r}, whose data lands at pool offset {@code offset}. */
  public int take(ReadRequest r, long offset, long nowNanos) {
    if (freeCount == 0) {
      throw new IllegalStateException("no free slot");
    }
    int slot = freeStack[--freeCount];
    requests[slot] = r;
    offsets[slot] = offset;
    postedAt[slot] = nowNanos;
    return slot;
  }

  /** The read in {@code slot}, or null when the slot is free (a stale or bogus id). */
  public ReadRequest request(int slot) {
    return slot >= 0 && slot < requests.length ? requests[slot] : null;
  }

  public long offset(int slot) {
    return offsets[slot];
  }

  /** Frees a taken slot. */
  public void release(int slot) {
    if (requests[slot] == null) {
      throw new IllegalStateException("slot " + slot + " is not in use");
    }
    requests[slot] = null;
    freeStack[freeCount++] = slot;
  }

  /** Post time of the oldest read in flight, or Long.MAX_VALUE when none. */
  public long oldestPostNanos() {
    long oldest = Long.MAX_VALUE;
    for (int i = 0; i < requests.length; i++) {
      if (requests[i] != null && postedAt[i] - oldest < 0) {
        oldest = postedAt[i];
      }
    }
    return oldest;
  }
}
