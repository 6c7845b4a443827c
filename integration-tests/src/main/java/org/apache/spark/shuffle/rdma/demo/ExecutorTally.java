/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What Spark itself saw: the executors that joined (id to host) and the remote blocks its
 * reducers fetched, to hold the plugin's own counters against. Registered through
 * {@code spark.extraListeners}, so that it sees executors that join while the SparkContext
 * is still being built; {@link #current()} is the one this JVM's context made.
 */
public final class ExecutorTally extends SparkListener {
  private static volatile ExecutorTally current;

  private final long t0 = System.nanoTime();
  private final Map<String, String> hosts = new TreeMap<>();
  private long remoteBlocks;
  private long remoteBytes;
  private long localBlocks;

  public ExecutorTally() {
    current = this;
  }

  static ExecutorTally current() {
    return current;
  }

  @Override
  public synchronized void onExecutorAdded(SparkListenerExecutorAdded e) {
    hosts.put(e.executorId(), e.executorInfo().executorHost());
    // Progress: under emulation an executor takes minutes to join.
    System.out.println("== executor " + e.executorId() + " joined from "
        + e.executorInfo().executorHost() + " (" + (System.nanoTime() - t0) / 1_000_000_000L
        + "s after the context started)");
    notifyAll();
  }

  @Override
  public synchronized void onExecutorRemoved(SparkListenerExecutorRemoved e) {
    System.out.println("== executor " + e.executorId() + " removed: " + e.reason());
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
    if (e.taskMetrics() == null) {
      return;
    }
    ShuffleReadMetrics r = e.taskMetrics().shuffleReadMetrics();
    remoteBlocks += r.remoteBlocksFetched();
    remoteBytes += r.remoteBytesRead();
    localBlocks += r.localBlocksFetched();
  }

  /**
   * Starts the block counts again from zero, so that they cover the next workload only (the
   * executors seen are kept).
   */
  synchronized void resetCounts() {
    remoteBlocks = 0;
    remoteBytes = 0;
    localBlocks = 0;
  }

  /** Waits until {@code n} executors have joined; false on timeout. */
  synchronized boolean awaitExecutors(int n, long timeoutMs) throws InterruptedException {
    long end = System.currentTimeMillis() + timeoutMs;
    while (hosts.size() < n) {
      long left = end - System.currentTimeMillis();
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }

  synchronized Map<String, String> executorHosts() {
    return new TreeMap<>(hosts);
  }

  synchronized long remoteBlocks() {
    return remoteBlocks;
  }

  synchronized long remoteBytes() {
    return remoteBytes;
  }

  synchronized long localBlocks() {
    return localBlocks;
  }
}
