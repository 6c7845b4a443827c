/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.apache.spark.shuffle.rdma.reader.ReaderStats;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.junit.jupiter.api.Test;

/**
 * Every metric is defined once (RdmaMetrics): the stats maps export exactly the defined
 * names, and docs/metrics.md shows exactly what the definitions render.
 */
class MetricsCatalogTest {

  /** The names the transport, the reader and the runtime put in an executor's stats map. */
  private static Set<String> exported() {
    Map<String, Long> m = new TreeMap<>();
    new TransportStats(false).snapshot().forEach((k, v) -> m.put("transport." + k, v));
    new ReaderStats().addTo(m);
    Set<String> names = new TreeSet<>(m.keySet());
    for (String k : new String[] {RdmaMetrics.REGISTRY_OUTPUTS,
        RdmaMetrics.REGISTRY_REGISTRATIONS, RdmaMetrics.REGISTRY_BYTES,
        RdmaMetrics.REGISTRY_OVER_CAP, RdmaMetrics.REGISTRY_FAILURES,
        RdmaMetrics.REGISTRY_HANDED_OVER, RdmaMetrics.REGISTRY_NOT_HANDED_OVER,
        RdmaMetrics.METADATA_TABLE_FETCHES}) {
      names.add(k);
    }
    return names;
  }

  @Test
  void everyExportedNameIsDefinedAndEveryDefinitionExported() {
    Set<String> defined = RdmaMetrics.ALL.stream().filter(m -> !m.clusterOnly)
        .map(m -> m.name).collect(Collectors.toCollection(TreeSet::new));
    assertEquals(defined, exported(), "RdmaMetrics.ALL and the stats maps differ: define "
        + "each counter in RdmaMetrics (then run bin/gen-config-doc)");
  }

  @Test
  void everyMetricHasAMeaning() {
    for (RdmaMetrics.Metric m : RdmaMetrics.ALL) {
      assertTrue(m.doc.length() > 15, "undocumented metric " + m.name);
    }
  }

  @Test
  void generatedDocIsCurrent() throws Exception {
    Path doc = MetricsDocGenerator.docPath(Paths.get(System.getProperty("project.root", "..")));
    String text = new String(Files.readAllBytes(doc), StandardCharsets.UTF_8);
    assertEquals(MetricsDocGenerator.render(text), text, doc + " is stale; run bin/gen-config-doc");
  }
}
