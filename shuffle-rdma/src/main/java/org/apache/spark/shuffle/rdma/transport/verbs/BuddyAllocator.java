/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.Arrays;

/**
 * Carves a fixed arena (the registered receive pool) into power-of-two blocks: allocation
 * and free are O(log n), freed neighbours merge back, and nothing is allocated on the Java
 * heap per call. Offsets are relative to the arena start. Thread-safe.
 */
public final class BuddyAllocator {
  /** Smallest block: one page, so small reads do not fragment the arena. */
  public static final int MIN_BLOCK = 4096;

  private final int maxOrder;
  private final int[] freeHead;      // per order: first free block index, or -1
  private final int[] next;          // per block: next free block of the same order, or -1
  private final int[] prev;          // per block: previous free block, or -1
  private final byte[] freeOrder;    // per block: order if it heads a free block, else -1
  private final byte[] usedOrder;    // per block: order if it heads an allocated block, else -1
  private long freeBytes;

  /** @param arenaBytes a power of two, at least {@link #MIN_BLOCK} */
  public BuddyAllocator(long arenaBytes) {
    if (arenaBytes < MIN_BLOCK || Long.bitCount(arenaBytes) != 1 || arenaBytes > (1L << 30)) {
      throw new IllegalArgumentException("arena must be a power of two in [4k, 1g]: "
          + arenaBytes);
    }
    int blocks = (int) (arenaBytes / MIN_BLOCK);
    this.maxOrder = Integer.numberOfTrailingZeros(blocks);
    this.freeHead = new int[maxOrder + 1];
    this.next = new int[blocks];
    this.prev = new int[blocks];
    this.freeOrder = new byte[blocks];
    this.usedOrder = new byte[blocks];
    Arrays.fill(freeHead, -1);
    Arrays.fill(freeOrder, (byte) -1);
    Arrays.fill(usedOrder, (byte) -1);
    push(0, maxOrder);
    this.freeBytes = arenaBytes;
  }

  /** Largest power of two not above {@code bytes} (the arena a configured size yields). */
  public static long arenaSizeFor(long bytes) {
    return Long.highestOneBit(Math.max(bytes, MIN_BLOCK));
  }

  public long capacity() {
    return (long) MIN_BLOCK << maxOrder;
  }

  public synchronized long freeBytes() {
    return freeBytes;
  }

  /** Offset of a block of at least {@code length} bytes, or -1 when none is free now. */
  public synchronized long allocate(int length) {
    int order = orderFor(length);
    if (order > maxOrder) {
      return -1;
    }
    int o = order;
    while (o <= maxOrder && freeHead[o] < 0) {
      o++;
    }
    if (o > maxOrder) {
      return -1;
    }
    int block = freeHead[o];
    unlink(block, o);
    while (o > order) {
      o--;
      push(block + (1 << o), o);
    }
    usedOrder[block] = (byte) order;
    freeBytes -= (long) MIN_BLOCK << order;
    return (long) block * MIN_BLOCK;
  }

  /** True when a read of {@code length} bytes can ever fit (the arena is large enough). */
  public boolean fits(int length) {
    return orderFor(length) <= maxOrder;
  }

  /** Returns a block from {@link #allocate}. */
  public synchronized void free(long offset) {
    int block = (int) (offset / MIN_BLOCK);
    if (offset % MIN_BLOCK != 0 || block < 0 || block >= usedOrder.length
        || usedOrder[block] < 0) {
      throw new IllegalArgumentException("not an allocated block: " + offset);
    }
    int o = usedOrder[block];
    usedOrder[block] = -1;
    freeBytes += (long) MIN_BLOCK << o;
    while (o < maxOrder) {
      int buddy = block ^ (1 << o);
      if (freeOrder[buddy] != o) {
        break;
      }
      unlink(buddy, o);
      block = Math.min(block, buddy);
      o++;
    }
    push(block, o);
  }

  static int orderFor(int length) {
    int blocks = (int) ((Math.max(length, 1) + (long) MIN_BLOCK - 1) / MIN_BLOCK);
    return 32 - Integer.numberOfLeadingZeros(blocks - 1);
  }

  private void push(int block, int order) {
    int head = freeHead[order];
    next[block] = head;
    prev[block] = -1;
    if (head >= 0) {
      prev[head] = block;
    }
    freeHead[order] = block;
    freeOrder[block] = (byte) order;
  }

  private void unlink(int block, int order) {
    if (prev[block] >= 0) {
      next[prev[block]] = next[block];
    } else {
      freeHead[order] = next[block];
    }
    if (next[block] >= 0) {
      prev[next[block]] = prev[block];
    }
    freeOrder[block] = -1;
  }
}
