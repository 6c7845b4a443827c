/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.ContextCleaner;
import org.apache.spark.SparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;

/**
 * Releases every shuffle of the application made so far, blocking, through the
 * ContextCleaner's own call ({@code doCleanupShuffle}: the driver's map output tracker, the
 * shuffle driver components, then every executor's {@code unregisterShuffle}), as the cleaner
 * does once a shuffle's dependency is garbage; then checks that every executor's registered
 * bytes went back to 0 (keys revoked, mappings released on real verbs). It first waits until
 * no stage runs: a SQL query can return while stages it no longer needs still run (adaptive
 * execution cancels them asynchronously), and releasing a shuffle under a running map task
 * is what the ContextCleaner never does (a first version did: the task's publish was
 * refused, Spark's MapOutputTrackerMaster lost a status message and the other executor's
 * next task waited on it for the rest of the run).
 */
final class ShuffleRelease {
  private static final long SETTLE_MS = 10_000;
  private static final long IDLE_MS = 120_000;

  private final SparkContext sc;
  private int releasedUpTo;

  ShuffleRelease(SparkContext sc) {
    this.sc = sc;
  }

  void releaseAll(Checks checks, String after) throws InterruptedException {
    long idleBy = System.currentTimeMillis() + IDLE_MS;
    int[] running;
    while ((running = sc.statusTracker().getActiveStageIds()).length > 0
        && System.currentTimeMillis() < idleBy) {
      Thread.sleep(200);
    }
    if (!checks.check("no stage left running", running.length == 0, running.length == 0
        ? "none after " + after : "stages " + java.util.Arrays.toString(running)
        + " still running " + IDLE_MS / 1000 + " s after " + after
        + "; its shuffles are not released")) {
      return;
    }
    // Takes one id; shuffles of later jobs get the ones after it.
    int next = sc.newShuffleId();
    ContextCleaner cleaner = sc.cleaner().get();
    for (int id = releasedUpTo; id < next; id++) {
      cleaner.doCleanupShuffle(id, true);
    }
    int from = releasedUpTo;
    releasedUpTo = next + 1;
    long deadline = System.currentTimeMillis() + SETTLE_MS;
    Map<String, Long> held;
    while (true) {
      held = new TreeMap<>();
      for (Map.Entry<String, Map<String, Long>> e : RdmaShuffleManager.clusterStats()
          .entrySet()) {
        held.put(e.getKey(), e.getValue().getOrDefault("registry.bytes", -1L));
      }
      if (held.values().stream().allMatch(b -> b == 0) || System.currentTimeMillis() > deadline) {
        break;
      }
      Thread.sleep(200);
    }
    checks.check("shuffles released, registrations with them", !held.isEmpty()
        && held.values().stream().allMatch(b -> b == 0), "shuffles " + from + ".." + (next - 1)
        + " released after " + after + "; registry.bytes per executor now " + held);
  }
}
