/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import org.junit.jupiter.api.Test;

/**
 * The source inside a parent registry the way Spark's MetricsSystem holds it (registered as
 * a child registry under the source name): counters that exist at start, counters that show
 * up later, and the driver's sums over executors.
 */
class RdmaMetricsSourceTest {
  private static long value(MetricRegistry parent, String name) {
    Counter c = parent.getCounters().get(name);
    if (c != null) {
      return c.getCount();
    }
    Gauge<?> g = parent.getGauges().get(name);
    return ((Number) g.getValue()).longValue();
  }

  @Test
  void countersAddedAfterStartAppearInTheParentRegistry() {
    Map<String, Long> stats = new LinkedHashMap<>();
    stats.put("transport.bytesRead", 0L);
    RdmaMetricsSource source = RdmaMetricsSource.executor(() -> new LinkedHashMap<>(stats));
    MetricRegistry parent = new MetricRegistry();
    parent.register("app.1." + source.sourceName(), source.metricRegistry());

    stats.put("transport.bytesRead", 4096L);
    assertEquals(4096L, value(parent, "app.1.rdmaShuffle.transport.bytesRead"));
    assertFalse(parent.getNames().contains("app.1.rdmaShuffle.transport.reconnects"));

    stats.put("transport.reconnects", 3L);  // a counter some later version adds
    value(parent, "app.1.rdmaShuffle.transport.bytesRead");  // a scrape refreshes
    assertEquals(3L, value(parent, "app.1.rdmaShuffle.transport.reconnects"));
  }

  @Test
  void driverSumsEveryCounterOverExecutors() {
    Map<String, Map<String, Long>> perExecutor = new LinkedHashMap<>();
    RdmaMetricsSource source = RdmaMetricsSource.cluster(() -> perExecutor);
    MetricRegistry parent = new MetricRegistry();
    parent.register("app.driver." + source.sourceName(), source.metricRegistry());
    assertEquals(0L, value(parent, "app.driver.rdmaShuffleCluster.executors"));

    assertEquals(Map.of("executors", 2L, "transport.verbs", 1L, "reader.remoteBlocks", 7L),
        RdmaMetricsSource.sum(Map.of(
            "1", Map.of("transport.verbs", 1L, "reader.remoteBlocks", 3L),
            "2", Map.of("transport.verbs", 0L, "reader.remoteBlocks", 4L))));
  }

  /** Monotonic counts are Spark counters, current values and settings gauges (RdmaMetrics). */
  @Test
  void eachMetricIsRegisteredByItsKind() {
    Map<String, Long> stats = new LinkedHashMap<>();
    stats.put("reader.remoteBlocks", 5L);
    stats.put("registry.bytes", 4096L);
    stats.put("transport.readDepth", 16L);
    RdmaMetricsSource source = RdmaMetricsSource.executor(() -> stats);
    MetricRegistry parent = new MetricRegistry();
    parent.register("app.1." + source.sourceName(), source.metricRegistry());
    assertEquals(5L, parent.getCounters().get("app.1.rdmaShuffle.reader.remoteBlocks").getCount());
    assertTrue(parent.getGauges().containsKey("app.1.rdmaShuffle.registry.bytes"));
    assertTrue(parent.getGauges().containsKey("app.1.rdmaShuffle.transport.readDepth"));
  }

  /** A per-executor setting summed over executors means nothing: the driver leaves it out. */
  @Test
  void driverDoesNotSumSettings() {
    Map<String, Long> total = RdmaMetricsSource.sum(Map.of(
        "1", Map.of("transport.readDepth", 16L, "transport.queuePairsPerPeer", 4L,
            "registry.bytes", 10L),
        "2", Map.of("transport.readDepth", 16L, "transport.queuePairsPerPeer", 4L,
            "registry.bytes", 5L)));
    assertEquals(Map.of("executors", 2L, "registry.bytes", 15L), total);
  }
}
