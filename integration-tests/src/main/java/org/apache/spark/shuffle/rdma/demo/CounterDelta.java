/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.spark.shuffle.rdma.RdmaMetrics;

/**
 * The plugin's counters moved between two {@code RdmaShuffleManager.clusterStats()} snapshots,
 * per executor, so that each workload of one application is checked on its own. Gauges (the
 * transport in use, bytes registered now, pinned copies now, ...: {@link RdmaMetrics}' gauges
 * and settings) are taken as they stand after.
 */
final class CounterDelta {
  /** Every metric the catalog defines as a gauge or a setting (not a counter). */
  static final Set<String> GAUGES = RdmaMetrics.ALL.stream()
      .filter(m -> m.kind != RdmaMetrics.Kind.COUNTER).map(m -> m.name)
      .collect(Collectors.toUnmodifiableSet());

  /** Derived key: the registry.outputs gauge when the run started. */
  static final String OUTPUTS_AT_START = "registry.outputsAtStart";

  private CounterDelta() {}

  static Map<String, Map<String, Long>> between(Map<String, Map<String, Long>> before,
      Map<String, Map<String, Long>> after) {
    Map<String, Map<String, Long>> out = new TreeMap<>();
    after.forEach((exec, now) -> {
      Map<String, Long> was = before.getOrDefault(exec, Map.of());
      Map<String, Long> d = new TreeMap<>();
      now.forEach((k, v) -> d.put(k, GAUGES.contains(k) ? v : v - was.getOrDefault(k, 0L)));
      // What the executor served when the run started: with the registrations made during
      // the run, the outputs a reader could have READ (cleanup may have dropped some since).
      d.put(OUTPUTS_AT_START, was.getOrDefault("registry.outputs", 0L));
      out.put(exec, d);
    });
    return out;
  }

  /** Sums over executors. */
  static Map<String, Long> total(Map<String, Map<String, Long>> stats) {
    Map<String, Long> total = new TreeMap<>();
    stats.values().forEach(m -> m.forEach((k, v) -> total.merge(k, v, Long::sum)));
    return total;
  }
}
