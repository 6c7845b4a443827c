/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;

/**
 * Listener on the driver: per completed stage its wall time and task metrics, and per
 * shuffle-reading task its fetch wait. A "read stage" is a stage whose tasks read shuffle
 * data (records read &gt; 0 or blocks fetched &gt; 0).
 */
public final class StageMetrics extends SparkListener {

  /** One completed stage. */
  public static final class Stage {
    public int id;
    public String name;
    public long wallMs, cpuNs, runMs, readBytes, remoteBytes, readRecords, fetchWaitMs,
        remoteBlocks, localBlocks, writeBytes;
    public boolean read;
  }

  private final List<Stage> stages = new ArrayList<>();
  private final List<Long> readTaskFetchWaitMs = new ArrayList<>();

  public synchronized void reset() {
    stages.clear();
    readTaskFetchWaitMs.clear();
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
    TaskMetrics m = e.taskMetrics();
    if (m == null) return;
    ShuffleReadMetrics r = m.shuffleReadMetrics();
    if (r.recordsRead() > 0 || r.remoteBlocksFetched() + r.localBlocksFetched() > 0) {
      readTaskFetchWaitMs.add(r.fetchWaitTime());
    }
  }

  @Override
  public synchronized void onStageCompleted(SparkListenerStageCompleted e) {
    StageInfo i = e.stageInfo();
    TaskMetrics m = i.taskMetrics();
    if (m == null || i.submissionTime().isEmpty() || i.completionTime().isEmpty()) return;
    Stage s = new Stage();
    s.id = i.stageId();
    s.name = i.name();
    s.wallMs = (Long) i.completionTime().get() - (Long) i.submissionTime().get();
    s.cpuNs = m.executorCpuTime();
    s.runMs = m.executorRunTime();
    ShuffleReadMetrics r = m.shuffleReadMetrics();
    s.remoteBytes = r.remoteBytesRead();
    s.readBytes = r.remoteBytesRead() + r.localBytesRead();
    s.readRecords = r.recordsRead();
    s.fetchWaitMs = r.fetchWaitTime();
    s.remoteBlocks = r.remoteBlocksFetched();
    s.localBlocks = r.localBlocksFetched();
    s.writeBytes = m.shuffleWriteMetrics().bytesWritten();
    s.read = s.readRecords > 0 || s.remoteBlocks + s.localBlocks > 0;
    stages.add(s);
  }

  public synchronized List<Stage> stages() {
    return new ArrayList<>(stages);
  }

  public synchronized List<Long> readTaskFetchWaits() {
    return new ArrayList<>(readTaskFetchWaitMs);
  }

  /** Sums over the stages recorded since the last reset. */
  public synchronized Totals totals() {
    Totals t = new Totals();
    for (Stage s : stages) {
      t.writeBytes += s.writeBytes;
      if (!s.read) continue;
      t.readStages++;
      t.readWallMs += s.wallMs;
      t.readCpuNs += s.cpuNs;
      t.readBytes += s.readBytes;
      t.remoteBytes += s.remoteBytes;
      t.remoteBlocks += s.remoteBlocks;
      t.localBlocks += s.localBlocks;
      t.fetchWaitMs += s.fetchWaitMs;
      t.readRecords += s.readRecords;
    }
    t.fetchWaits = readTaskFetchWaits();
    return t;
  }

  /** Read-stage totals of one measured segment. */
  public static final class Totals {
    public int readStages;
    public long readWallMs, readCpuNs, readBytes, remoteBytes, remoteBlocks, localBlocks,
        fetchWaitMs, readRecords, writeBytes;
    public List<Long> fetchWaits = new ArrayList<>();
  }
}
