/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;

/**
 * Spark's side of one fetch, as little of it as possible: holds each delivered block (retain,
 * as ShuffleBlockFetcherIterator does) until the fetch is over, wakes the waiting task thread
 * when the last block arrived, and checks the blocks outside the reader: every block's size,
 * and on request its bytes against the mapping. Reused across fetches: allocates nothing.
 */
final class Collector implements BlockFetchingListener {
  private final Outputs outputs;
  private final String[] ids;
  private final ManagedBuffer[] held;
  private final AtomicInteger slot = new AtomicInteger();
  private final AtomicInteger arrived = new AtomicInteger();
  private volatile Thread waiter;
  private volatile Throwable failure;
  private volatile String failedId;

  Collector(Outputs outputs) {
    this.outputs = outputs;
    this.ids = new String[outputs.outputs()];
    this.held = new ManagedBuffer[outputs.outputs()];
  }

  void reset() {
    slot.set(0);
    arrived.set(0);
    failure = null;
    waiter = Thread.currentThread();
  }

  @Override
  public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
    data.retain();
    int i = slot.getAndIncrement();
    ids[i] = blockId;
    held[i] = data;
    arrivedOne();
  }

  @Override
  public void onBlockFetchFailure(String blockId, Throwable cause) {
    failedId = blockId;
    failure = cause;
    slot.getAndIncrement();
    arrivedOne();
  }

  private void arrivedOne() {
    if (arrived.incrementAndGet() == held.length) {
      LockSupport.unpark(waiter);
    }
  }

  /** Waits for every block of the fetch (parks, as Spark's task waits on its results). */
  void await() {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (arrived.get() < held.length) {
      LockSupport.parkNanos(this, 10_000_000L);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(arrived.get() + " of " + held.length
            + " blocks arrived within 30 s");
      }
    }
  }

  /**
   * Checks the fetch and releases its blocks: each size, each block once, and with
   * {@code bytes} every byte against the mapping. Throws on the first difference.
   */
  void checkAndRelease(int reduce, boolean bytes) {
    Throwable f = failure;
    if (f != null) {
      releaseAll();
      throw new IllegalStateException("block " + failedId + " failed: " + f, f);
    }
    long seen = 0;
    for (int i = 0; i < held.length; i++) {
      ManagedBuffer b = held[i];
      if (b.size() != outputs.block) {
        releaseAll();
        throw new IllegalStateException(ids[i] + ": " + b.size() + " bytes, expected "
            + outputs.block);
      }
      if (bytes) {
        int m = Outputs.outputOf(ids[i]);
        int r = Outputs.reduceOf(ids[i]);
        seen |= 1L << (m % 64);
        ByteBuffer got;
        try {
          got = b.nioByteBuffer();
        } catch (java.io.IOException e) {
          throw new IllegalStateException(e);
        }
        ByteBuffer want = outputs.data(m).slice(r * outputs.block, outputs.block);
        if (r != reduce || got.mismatch(want) >= 0) {
          releaseAll();
          throw new IllegalStateException("block " + ids[i] + ": bytes differ from the "
              + "mapping at " + got.mismatch(want) + " (fetched reduce " + reduce + ")");
        }
      }
    }
    if (bytes && Long.bitCount(seen) != Math.min(64, held.length)) {
      releaseAll();
      throw new IllegalStateException("a block was delivered twice, another never");
    }
    releaseAll();
  }

  private void releaseAll() {
    for (int i = 0; i < held.length; i++) {
      if (held[i] != null) {
        held[i].release();
        held[i] = null;
      }
    }
  }
}
