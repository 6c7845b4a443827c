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
}
