/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** The verbs transport's callback threads (plain Java: no RDMA device needed). */
class CallbackDispatcherTest {

  @Test
  void threadsAreTheCoresClampedToTwoToEight() {
    assertEquals(2, CallbackDispatcher.threads(1));
    assertEquals(4, CallbackDispatcher.threads(4));
    assertEquals(8, CallbackDispatcher.threads(64));
  }

  @Test
  void callbacksRunOffTheCallersThread() throws Exception {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-callbacks-");
    AtomicReference<Thread> ran = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    d.dispatch(() -> {
      ran.set(Thread.currentThread());
      done.countDown();
    });
    assertTrue(done.await(10, TimeUnit.SECONDS));
    assertNotSame(Thread.currentThread(), ran.get());
    assertTrue(ran.get().getName().startsWith("test-callbacks-"), ran.get().getName());
    assertTrue(ran.get().isDaemon());
    d.shutdown();
  }

  /** Failure callbacks of reads a close ended still reach the reader after shutdown. */
  @Test
  void afterShutdownTheCallerRunsTheCallback() {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-callbacks-");
    d.shutdown();
    AtomicReference<Thread> ran = new AtomicReference<>();
    d.dispatch(() -> ran.set(Thread.currentThread()));
    assertSame(Thread.currentThread(), ran.get());
  }

  /** Counts each task's runs; {@link #awaitAll} fails on a lost or a repeated one. */
  private static final class Tally {
    final AtomicIntegerArray runs;
    final CountDownLatch all;

    Tally(int tasks) {
      runs = new AtomicIntegerArray(tasks);
      all = new CountDownLatch(tasks);
    }

    Runnable task(int i) {
      return () -> {
        runs.incrementAndGet(i);
        all.countDown();
      };
    }

    void awaitAll(String what) throws InterruptedException {
      boolean done = all.await(10, TimeUnit.SECONDS);
      Thread.sleep(50); // a repeated run shows up after the last first run
      for (int i = 0; i < runs.length(); i++) {
        assertEquals(1, runs.get(i), what + ": task " + i + " ran " + runs.get(i) + " times"
            + (done ? "" : " (not all ran within 10 s)"));
      }
    }
  }

  /**
   * Completion threads hand over batches while every callback thread is busy, then nothing
   * more comes: every batch still runs, once, within a bounded time (no wake-up lost, none
   * run twice).
   */
  @Test
  void tasksHandedOverWhileTheThreadsAreBusyAllRunOnce() throws Exception {
    CallbackDispatcher d = new CallbackDispatcher(2, "test-callbacks-");
    int threads = CallbackDispatcher.threads(2);
    CountDownLatch busy = new CountDownLatch(threads);
    CountDownLatch gate = new CountDownLatch(1);
    for (int i = 0; i < threads; i++) {
      d.dispatch(() -> {
        busy.countDown();
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    assertTrue(busy.await(10, TimeUnit.SECONDS), "every callback thread busy");
    int perProducer = 2_000;
    Tally tally = new Tally(2 * perProducer);
    Thread[] producers = new Thread[2];
    for (int p = 0; p < producers.length; p++) {
      int base = p * perProducer;
      producers[p] = new Thread(() -> {
        for (int i = 0; i < perProducer; i++) {
          d.dispatch(tally.task(base + i));
          if (i == perProducer / 2) {
            gate.countDown(); // the threads free up while batches still arrive
          }
        }
      });
      producers[p].start();
    }
    for (Thread t : producers) {
      t.join(10_000);
    }
    tally.awaitAll("handed over while busy");
    d.shutdown();
  }

  /** Hand-overs racing the transport's close: each runs once, on a thread or the caller. */
  @Test
  void tasksHandedOverDuringShutdownRunOnce() throws Exception {
    for (int round = 0; round < 20; round++) {
      CallbackDispatcher d = new CallbackDispatcher(2, "test-callbacks-");
      Tally tally = new Tally(500);
      CountDownLatch started = new CountDownLatch(1);
      Thread producer = new Thread(() -> {
        for (int i = 0; i < 500; i++) {
          if (i == 100) {
            started.countDown();
          }
          d.dispatch(tally.task(i));
        }
      });
      producer.start();
      assertTrue(started.await(10, TimeUnit.SECONDS));
      d.shutdown();
      producer.join(10_000);
      tally.awaitAll("round " + round);
    }
  }
}
