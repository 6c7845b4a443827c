/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.shuffle.rdma.metadata.ClusterTotals;

/**
 * The plugin's counters in Spark's metrics system, named as in the stats map
 * (transport.bytesRead, reader.remoteBlocks, registry.bytes, ...) and registered by the kind
 * {@link RdmaMetrics} defines for each: monotonic counts as Spark counters, current values
 * and per-executor settings as gauges (a name with no definition as a gauge; a test keeps
 * that from happening). Names that first show up after start are registered at the next
 * refresh; Spark's registry picks them up through the child-registry listener. Sinks
 * (PrometheusServlet, JMX, ...) read the values.
 *
 * <p>Two instances: "rdmaShuffle" on each executor (its own counters, read from memory) and
 * "rdmaShuffleCluster" on the driver (sums over executors, which cost one RPC per live
 * executor, so at most one refresh per {@link #CLUSTER_MAX_AGE_MS}): gauges over the live
 * executors, counters also over the removed ones as last seen, so that they only grow
 * ({@link ClusterTotals}).
 */
final class RdmaMetricsSource implements Source {
  static final String EXECUTOR = "rdmaShuffle";
  static final String CLUSTER = "rdmaShuffleCluster";
  /** How stale the driver's sums may be: bounds the RPCs that frequent scrapes cost. */
  static final long CLUSTER_MAX_AGE_MS = 5_000;

  private final String name;
  private final MetricRegistry registry = new MetricRegistry();
  private final Supplier<Map<String, Long>> stats;
  private final long maxAgeNanos;
  private Map<String, Long> last = Map.of();
  private long takenAt;
  private boolean taken;

  RdmaMetricsSource(String name, Supplier<Map<String, Long>> stats, long maxAgeMillis) {
    this.name = name;
    this.stats = stats;
    this.maxAgeNanos = TimeUnit.MILLISECONDS.toNanos(maxAgeMillis);
    if (maxAgeMillis == 0) {
      current();
    } else {
      // The driver's source: no RPC while the first shuffle registers; "executors" is always
      // there, and its first read takes the snapshot that registers the rest.
      registry.register(RdmaMetrics.EXECUTORS, gauge(RdmaMetrics.EXECUTORS));
    }
  }

  private Gauge<Long> gauge(String key) {
    return () -> current().getOrDefault(key, 0L);
  }

  /** A counter whose count is the stats map's value (the map's counters only grow). */
  private Counter counter(String key) {
    return new Counter() {
      @Override
      public long getCount() {
        return current().getOrDefault(key, 0L);
      }
    };
  }

  private Metric metric(String key) {
    RdmaMetrics.Metric m = RdmaMetrics.byName(key);
    return m != null && m.kind == RdmaMetrics.Kind.COUNTER ? counter(key) : gauge(key);
  }

  /** This executor's counters, read fresh on every scrape. */
  static RdmaMetricsSource executor(Supplier<Map<String, Long>> stats) {
    return new RdmaMetricsSource(EXECUTOR, stats, 0);
  }

  /** The driver's view: every counter summed over the executors given, plus "executors". */
  static RdmaMetricsSource cluster(Supplier<Map<String, Map<String, Long>>> perExecutor) {
    return clusterTotals(() -> sum(perExecutor.get()));
  }

  /** The driver's view from sums already taken ({@link ClusterTotals#totals()}). */
  static RdmaMetricsSource clusterTotals(Supplier<Map<String, Long>> totals) {
    return new RdmaMetricsSource(CLUSTER, totals, CLUSTER_MAX_AGE_MS);
  }

  /** Sums each counter over executors; "executors" counts them ("transport.verbs" then
   * counts those on verbs). Per-executor settings (readDepth, ...) are left out: their sum
   * means nothing, the executors' own sources show them. */
  /**
   * The driver's running totals over executors (docs/metrics.md): counters are the catalog's
   * {@link RdmaMetrics.Kind#COUNTER} metrics, live reports summed as {@link #sum} does.
   */
  static ClusterTotals newClusterTotals() {
    return new ClusterTotals(name -> {
      RdmaMetrics.Metric m = RdmaMetrics.byName(name);
      return m != null && m.kind == RdmaMetrics.Kind.COUNTER;
    }, RdmaMetricsSource::sum);
  }

  static Map<String, Long> sum(Map<String, Map<String, Long>> perExecutor) {
    Map<String, Long> total = new LinkedHashMap<>();
    total.put(RdmaMetrics.EXECUTORS, (long) perExecutor.size());
    for (Map<String, Long> counters : perExecutor.values()) {
      counters.forEach((k, v) -> {
        RdmaMetrics.Metric m = RdmaMetrics.byName(k);
        if (m == null || m.onCluster()) {
          total.merge(k, v, Long::sum);
        }
      });
    }
    return total;
  }

  private synchronized Map<String, Long> current() {
    long now = System.nanoTime();
    if (!taken || now - takenAt >= maxAgeNanos) {
      try {
        last = stats.get();
      } catch (RuntimeException e) {
        // An executor or the driver shutting down: keep the last values, never fail a scrape.
      }
      takenAt = now;
      taken = true;
      for (String key : last.keySet()) {
        if (!registry.getNames().contains(key)) {
          registry.register(key, metric(key));
        }
      }
    }
    return last;
  }

  @Override
  public String sourceName() {
    return name;
  }

  @Override
  public MetricRegistry metricRegistry() {
    return registry;
  }
}
