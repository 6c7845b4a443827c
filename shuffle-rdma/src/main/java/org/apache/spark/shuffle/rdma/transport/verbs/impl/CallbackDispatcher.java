/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs read callbacks, so completion threads only poll: a fixed number of named daemon
 * threads. Its queue holds completed reads whose callbacks have not run yet; each holds its
 * receive-pool memory (successes) or its slot was already released (failures), so the pool
 * and the reads in flight bound it.
 */
final class CallbackDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(CallbackDispatcher.class);

  private final ThreadPoolExecutor executor;

  CallbackDispatcher(int cores, String prefix) {
    int threads = threads(cores);
    AtomicInteger n = new AtomicInteger();
    executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, prefix + n.getAndIncrement());
          t.setDaemon(true);
          return t;
        });
    executor.allowCoreThreadTimeOut(true);
  }

  /** Threads running read callbacks: the executor's cores, at least 2, at most 8. */
  static int threads(int cores) {
    return Math.max(2, Math.min(8, cores));
  }

  /**
   * Runs a read callback off the completion thread. After shutdown the caller runs it (only
   * failure callbacks of reads the close ended remain then).
   */
  void dispatch(Runnable callback) {
    try {
      executor.execute(callback);
    } catch (RejectedExecutionException e) {
      callback.run();
    }
  }

  /** Tasks handed to the threads so far (exact once they ran; for tests). */
  long tasksDispatched() {
    return executor.getTaskCount();
  }

  /** Lets the queued callbacks finish (up to 10 s), then stops the threads. */
  void shutdown() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("verbs transport close: read callbacks still running after 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
