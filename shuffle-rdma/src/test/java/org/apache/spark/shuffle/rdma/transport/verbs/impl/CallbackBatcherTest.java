/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;
import org.junit.jupiter.api.Test;

/** Completed reads go to the callback threads in batches (plain Java: no device needed). */
class CallbackBatcherTest {

  /** Records where and how each read's callback ran, and the buffer's references then. */
  private static class Recorder implements ReadCallback {
    final Map<Integer, String> outcome = new ConcurrentHashMap<>();
    final Map<Integer, Integer> refsDuringCallback = new ConcurrentHashMap<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final Map<Integer, Thread> failedOn = new ConcurrentHashMap<>();
    final CountDownLatch done;
    final int throwFor;

    Recorder(int reads, int throwFor) {
      this.done = new CountDownLatch(reads);
      this.throwFor = throwFor;
    }

    @Override
    public void onSuccess(ReadRequest request, ManagedBuffer data) {
      int id = (Integer) request.attachment();
      threads.add(Thread.currentThread());
      refsDuringCallback.put(id, ((PooledManagedBuffer) data).refCount());
      if (id == throwFor) {
        throw new IllegalStateException("callback bug on read " + id);
      }
      outcome.put(id, "ok");
      done.countDown();
    }

    @Override
    public void onFailure(ReadRequest request, Throwable cause) {
      int id = (Integer) request.attachment();
      threads.add(Thread.currentThread());
      failedOn.put(id, Thread.currentThread());
      outcome.put(id, "failed: " + cause.getMessage());
      done.countDown();
    }
  }

  private static ReadRequest read(int id, Recorder r) {
    return new ReadRequest(4096L * id, 7, 64, r, id);
  }

  @Test
  void aDrainsCompletionsGoOverInFewTasksOffTheCompletionThread() throws Exception {
    CallbackDispatcher d = new CallbackDispatcher(4, "test-batches-");
    AtomicLong readsFailed = new AtomicLong();
    CallbackBatcher batcher = new CallbackBatcher(d, readsFailed);
    int reads = 40;
    Recorder rec = new Recorder(reads, 5);
    AtomicInteger recycled = new AtomicInteger();
    PooledManagedBuffer[] buffers = new PooledManagedBuffer[reads];
    for (int i = 0; i < reads; i++) {
      if (i == 9) {
        batcher.failure(read(i, rec), new java.io.IOException("remote access error"));
        continue;
      }
      buffers[i] = new PooledManagedBuffer(ByteBuffer.allocate(64), i,
          off -> recycled.incrementAndGet());
      batcher.success(read(i, rec), buffers[i]);
    }
    batcher.flush();
    assertTrue(rec.done.await(10, TimeUnit.SECONDS), "every callback ran");
    d.shutdown();

    long tasks = d.tasksDispatched();
    assertEquals((reads + CallbackBatcher.BATCH - 1) / CallbackBatcher.BATCH, tasks,
        reads + " completions should be " + CallbackBatcher.BATCH + " per hand-off, not one each");
    for (Thread t : rec.threads) {
      assertNotSame(Thread.currentThread(), t, "no callback on the completion thread");
      assertTrue(t.getName().startsWith("test-batches-"), t.getName());
    }
    // Failure isolation per read: the throwing callback fails its read only.
    assertEquals("failed: callback bug on read 5", rec.outcome.get(5));
    assertEquals("failed: remote access error", rec.outcome.get(9));
    assertEquals(1, readsFailed.get(), "the callback that threw counts as a failed read");
    for (int i = 0; i < reads; i++) {
      if (i != 5 && i != 9) {
        assertEquals("ok", rec.outcome.get(i), "read " + i);
      }
    }
    // Pool memory is released after its callback, once per read (also the one that threw).
    for (int i = 0; i < reads; i++) {
      if (buffers[i] != null) {
        assertEquals(1, rec.refsDuringCallback.get(i), "held during the callback, read " + i);
        assertEquals(0, buffers[i].refCount(), "released after it, read " + i);
      }
    }
    assertEquals(reads - 1, recycled.get());
  }

  /**
   * Successes whose callback takes the completion thread (the reader's final in-memory
   * deliveries) run at once on it, with the pool memory released after; the others and every
   * failure still go to the callback threads in batches.
   */
  @Test
  void deliveriesThatAskForItRunOnTheCompletionThread() throws Exception {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-batches-");
    AtomicLong readsFailed = new AtomicLong();
    CallbackBatcher batcher = new CallbackBatcher(d, readsFailed);
    int reads = 20;
    // Even ids deliver on the completion thread; 4 throws there; 7 fails.
    Recorder rec = new Recorder(reads, 4) {
      @Override
      public boolean deliversOnCompletionThread(ReadRequest request) {
        return (Integer) request.attachment() % 2 == 0;
      }
    };
    AtomicInteger recycled = new AtomicInteger();
    PooledManagedBuffer[] buffers = new PooledManagedBuffer[reads];
    Map<Integer, Thread> ranOn = new ConcurrentHashMap<>();
    for (int i = 0; i < reads; i++) {
      if (i == 7) {
        batcher.failure(read(i, rec), new java.io.IOException("remote access error"));
        continue;
      }
      buffers[i] = new PooledManagedBuffer(ByteBuffer.allocate(64), i,
          off -> recycled.incrementAndGet());
      int before = rec.threads.size();
      batcher.success(read(i, rec), buffers[i]);
      if (i % 2 == 0) {
        // Ran before success() returned, on this thread, its memory already back.
        assertEquals(before + 1, rec.threads.size(), "read " + i + " delivered at once");
        ranOn.put(i, rec.threads.get(before));
        assertEquals(0, buffers[i].refCount(), "released after its callback, read " + i);
      }
    }
    batcher.flush();
    assertTrue(rec.done.await(10, TimeUnit.SECONDS), "every callback ran");
    d.shutdown();
    for (int i = 0; i < reads; i += 2) {
      assertSame(Thread.currentThread(), ranOn.get(i), "read " + i);
    }
    // The 9 odd successes, the failure and 4's failure (its success threw on this thread;
    // the failure callback runs on a callback thread): 11 reads, one batch.
    assertEquals(1, d.tasksDispatched());
    assertEquals("failed: callback bug on read 4", rec.outcome.get(4));
    assertTrue(rec.failedOn.get(4).getName().startsWith("test-batches-"),
        rec.failedOn.get(4).getName());
    assertEquals("failed: remote access error", rec.outcome.get(7));
    assertEquals(1, readsFailed.get());
    assertEquals(reads - 1, recycled.get());
  }

  @Test
  void nothingCollectedNothingDispatched() {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-batches-");
    CallbackBatcher batcher = new CallbackBatcher(d, new AtomicLong());
    batcher.flush();
    batcher.flush();
    d.shutdown();
    assertEquals(0, d.tasksDispatched());
  }

  /** After shutdown the completion thread runs the batch itself (only failures are left). */
  @Test
  void afterShutdownTheBatchRunsOnTheCaller() {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-batches-");
    d.shutdown();
    CallbackBatcher batcher = new CallbackBatcher(d, new AtomicLong());
    Recorder rec = new Recorder(1, -1);
    batcher.failure(read(1, rec), new java.io.IOException("closed"));
    batcher.flush();
    assertEquals("failed: closed", rec.outcome.get(1));
    assertSame(Thread.currentThread(), rec.threads.get(0));
  }
}
