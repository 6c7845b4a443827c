/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;

/**
 * Collects the reads one drain of a {@link CompletionAgent} completed and hands them to the
 * {@link CallbackDispatcher} in batches: one thread hand-off per {@link #BATCH} reads
 * instead of one per read. A drain of more than {@link #BATCH} goes out as several batches,
 * which the dispatcher's threads run side by side. A success whose callback says it only
 * hands the bytes on ({@link ReadCallback#deliversOnCompletionThread}: the reader's final
 * in-memory deliveries to Spark) runs at once on the completion thread instead, so a fetch's
 * blocks reach Spark with no hand-off between them. Owned by that thread, except that
 * callback threads return spent batches.
 */
final class CallbackBatcher {
  /** Reads per hand-off: a drain polls 32 completions at a time, so two or more threads help. */
  static final int BATCH = 16;
  /** Spent batches kept for reuse, so a warm transport allocates none. */
  private static final int SPARES = 64;

  private final CallbackDispatcher dispatcher;
  private final AtomicLong readsFailed;
  // A lock-based queue: unlike ConcurrentLinkedQueue it allocates no node per offer.
  private final ArrayBlockingQueue<Batch> spares = new ArrayBlockingQueue<>(SPARES);
  private Batch filling;

  /** @param readsFailed counts reads whose success callback threw (they fail instead) */
  CallbackBatcher(CallbackDispatcher dispatcher, AtomicLong readsFailed) {
    this.dispatcher = dispatcher;
    this.readsFailed = readsFailed;
  }

  /** A read that completed: {@code data}'s reference is released after its callback. */
  void success(ReadRequest r, PooledManagedBuffer data) {
    if (r.callback().deliversOnCompletionThread(r)) {
      RuntimeException e = deliver(r, data);
      if (e != null) {
        // Its failure callback may do more (a retry), so it goes to the callback threads.
        readsFailed.incrementAndGet();
        add(r, null, e);
      }
      return;
    }
    add(r, data, null);
  }

  /** A read that failed (already counted by the caller). */
  void failure(ReadRequest r, Throwable cause) {
    add(r, null, cause);
  }

  /** Hands over what was collected; after every pass of drains. */
  void flush() {
    Batch b = filling;
    if (b != null) {
      filling = null;
      dispatcher.dispatch(b);
    }
  }

  private void add(ReadRequest r, PooledManagedBuffer data, Throwable cause) {
    Batch b = filling;
    if (b == null) {
      b = spares.poll();
      filling = b = b != null ? b : new Batch();
    }
    b.reads[b.size] = r;
    b.data[b.size] = data;
    b.causes[b.size] = cause;
    if (++b.size == BATCH) {
      flush();
    }
  }

  /** Up to BATCH reads' callbacks, run in order on one callback thread. */
  private final class Batch implements Runnable {
    final ReadRequest[] reads = new ReadRequest[BATCH];
    final PooledManagedBuffer[] data = new PooledManagedBuffer[BATCH];
    final Throwable[] causes = new Throwable[BATCH];
    int size;

    @Override
    public void run() {
      for (int i = 0; i < size; i++) {
        ReadRequest r = reads[i];
        PooledManagedBuffer d = data[i];
        RuntimeException e = d != null ? deliver(r, d) : null;
        if (e != null) {
          readsFailed.incrementAndGet();
          fail(r, e);
        } else if (d == null) {
          fail(r, causes[i]);
        }
        reads[i] = null;
        data[i] = null;
        causes[i] = null;
      }
      size = 0;
      spares.offer(this); // dropped when enough are spare
    }

  }

  /**
   * One read's success, its memory returned after it; what its callback threw (the read then
   * fails, and only it), else null.
   */
  private static RuntimeException deliver(ReadRequest r, PooledManagedBuffer d) {
    try {
      r.callback().onSuccess(r, d);
      return null;
    } catch (RuntimeException e) {
      return e;
    } finally {
      d.release(); // pool memory returns only after the callback
    }
  }

  private static void fail(ReadRequest r, Throwable cause) {
    try {
      r.callback().onFailure(r, cause);
    } catch (RuntimeException ignored) {
      // a callback's own failure must not stop the other reads of the batch
    }
  }
}
