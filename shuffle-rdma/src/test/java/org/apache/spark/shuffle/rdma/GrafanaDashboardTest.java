/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.codahale.metrics.MetricRegistry;
import org.apache.spark.metrics.sink.PrometheusServlet;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard (conf-templates/grafana/) names only metrics the driver exports: each
 * expression's metric-name regex must match a series name that Spark's own PrometheusServlet
 * writes for the driver's rdmaShuffleCluster source, which here holds every metric RdmaMetrics
 * defines.
 */
class GrafanaDashboardTest {
  private static final Pattern NAME_MATCHER = Pattern.compile("__name__=~\"([^\"]+)\"");

  /** The series names PrometheusServlet writes for the cluster source (labels cut off). */
  private static Set<String> exportedNames() throws Exception {
    Map<String, Long> stats = new LinkedHashMap<>();
    for (RdmaMetrics.Metric m : RdmaMetrics.ALL) {
      stats.put(m.name, 1L);
    }
    RdmaMetricsSource source = RdmaMetricsSource.cluster(() -> Map.of("1", stats));
    MetricRegistry parent = new MetricRegistry();
    parent.register("app-20261206080000-0001.driver." + source.sourceName(),
        source.metricRegistry());
    PrometheusServlet servlet = new PrometheusServlet(new Properties(), parent);
    snapshot(servlet);  // the first read registers what the stats hold
    Set<String> names = new TreeSet<>();
    for (String line : snapshot(servlet).split("\n")) {
      if (line.contains("rdmaShuffleCluster")) {
        names.add(line.substring(0, line.indexOf('{')));
      }
    }
    return names;
  }

  /** getMetricsSnapshot() on Spark 4; Spark 3.5 has only the servlet form (request unused). */
  private static String snapshot(PrometheusServlet servlet) throws Exception {
    for (Method m : PrometheusServlet.class.getMethods()) {
      if (m.getName().equals("getMetricsSnapshot") && m.getParameterCount() == 0) {
        return (String) m.invoke(servlet);
      }
    }
    for (Method m : PrometheusServlet.class.getMethods()) {
      if (m.getName().equals("getMetricsSnapshot") && m.getParameterCount() == 1) {
        return (String) m.invoke(servlet, new Object[] {null});
      }
    }
    throw new AssertionError("PrometheusServlet has no getMetricsSnapshot");
  }

  /** Every "expr" value anywhere in the parsed JSON. */
  private static void collectExpressions(Object node, List<String> out) {
    if (node instanceof Map) {
      ((Map<?, ?>) node).forEach((k, v) -> {
        if ("expr".equals(k)) {
          out.add(String.valueOf(v));
        } else {
          collectExpressions(v, out);
        }
      });
    } else if (node instanceof List) {
      ((List<?>) node).forEach(n -> collectExpressions(n, out));
    }
  }

  @Test
  void everyExpressionNamesAnExportedMetric() throws Exception {
    Path root = Paths.get(System.getProperty("project.root", ".."));
    // SnakeYAML reads JSON (a subset of YAML) on every Spark line; Jackson's versions on the
    // 3.5 test class path do not fit together (see KubernetesSchemaTest).
    Object dashboard = new Yaml().load(new String(Files.readAllBytes(
        root.resolve("conf-templates/grafana/spark-shuffle-rdma.json")), StandardCharsets.UTF_8));
    List<String> exprs = new ArrayList<>();
    collectExpressions(dashboard, exprs);
    assertFalse(exprs.isEmpty(), "no expressions in the dashboard");
    Set<String> exported = exportedNames();
    assertTrue(exported.contains(RdmaMetrics.prometheusName("app_20261206080000_0001",
        "driver", RdmaMetricsSource.CLUSTER, RdmaMetrics.byName("reader.remoteBlocks"))),
        "RdmaMetrics.prometheusName disagrees with Spark's PrometheusServlet: " + exported);
    for (String expr : exprs) {
      Matcher m = NAME_MATCHER.matcher(expr);
      boolean any = false;
      while (m.find()) {
        any = true;
        Pattern p = Pattern.compile(m.group(1));  // Prometheus anchors the regex: matches()
        assertTrue(exported.stream().anyMatch(n -> p.matcher(n).matches()),
            "'" + m.group(1) + "' in '" + expr + "' names no exported metric; exported: "
                + exported);
      }
      assertTrue(any, "'" + expr + "' names no metric with __name__=~\"...\"");
    }
  }
}
