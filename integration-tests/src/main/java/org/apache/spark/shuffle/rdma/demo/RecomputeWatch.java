/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.FetchFailed;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What Spark's scheduler did about a fault, as its listener bus reports it: the fetch failures
 * (which executor's blocks, why), the shuffle map stages submitted again (attempt above 0),
 * which executors ran successful map tasks, and which ran result (reduce) tasks.
 */
final class RecomputeWatch extends SparkListener {
  private final List<FetchFailed> fetchFailures = new ArrayList<>();
  private final List<String> mapResubmissions = new ArrayList<>();
  private final Map<String, Integer> mapTasksByExecutor = new TreeMap<>();
  private final Map<String, Integer> resultTasksByExecutor = new TreeMap<>();

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
    if ("ResultTask".equals(e.taskType())) {
      resultTasksByExecutor.merge(e.taskInfo().executorId(), 1, Integer::sum);
    }
    if (e.reason() instanceof FetchFailed) {
      fetchFailures.add((FetchFailed) e.reason());
    } else if ("ShuffleMapTask".equals(e.taskType()) && e.taskInfo().successful()) {
      mapTasksByExecutor.merge(e.taskInfo().executorId(), 1, Integer::sum);
    }
  }

  @Override
  public synchronized void onStageSubmitted(SparkListenerStageSubmitted e) {
    if (e.stageInfo().shuffleDepId().isDefined() && e.stageInfo().attemptNumber() > 0) {
      mapResubmissions.add("stage " + e.stageInfo().stageId() + " attempt "
          + e.stageInfo().attemptNumber());
    }
  }

  /** Forgets the map tasks seen so far (the fault's own shuffle starts counting here). */
  synchronized void resetMapTasks() {
    mapTasksByExecutor.clear();
  }

  /** Forgets the result tasks seen so far. */
  synchronized void resetResultTasks() {
    resultTasksByExecutor.clear();
  }

  /** Result tasks that ended (successful or not) per executor since the last reset. */
  synchronized Map<String, Integer> resultTasksByExecutor() {
    return new TreeMap<>(resultTasksByExecutor);
  }

  synchronized Map<String, Integer> mapTasksByExecutor() {
    return new TreeMap<>(mapTasksByExecutor);
  }

  /** Fetch failures whose block manager is {@code executor}'s. */
  synchronized List<FetchFailed> fetchFailuresFrom(String executor) {
    List<FetchFailed> out = new ArrayList<>();
    for (FetchFailed f : fetchFailures) {
      if (f.bmAddress() != null && executor.equals(f.bmAddress().executorId())) {
        out.add(f);
      }
    }
    return out;
  }

  synchronized int fetchFailures() {
    return fetchFailures.size();
  }

  synchronized List<String> mapResubmissions() {
    return List.copyOf(mapResubmissions);
  }
}
