package org.apache.spark.shuffle.rdma;

import java.util.Map;
import java.util.function.Supplier;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import org.apache.spark.metrics.source.Source;

/**
 * The plugin's counters in Spark's metrics system (namespace "rdmaShuffle"): registered
 * regions and bytes, reads posted, served and refused, table fetches. Leak checks and
 * dashboards read the same numbers the tests assert.
 */
final class RdmaMetricsSource implements Source {
  private final MetricRegistry registry = new MetricRegistry();

  RdmaMetricsSource(Supplier<Map<String, Long>> stats) {
    for (String name : stats.get().keySet()) {
      registry.register(name, (Gauge<Long>) () -> stats.get().getOrDefault(name, 0L));
    }
  }

  @Override
  public String sourceName() {
    return "rdmaShuffle";
  }

  @Override
  public MetricRegistry metricRegistry() {
    return registry;
  }
}
