/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Renders the metrics table of docs/metrics.md from {@link RdmaMetrics#ALL}, the single
 * definition of every metric. The prose around it is written by hand; only the part between
 * {@link #BEGIN} and {@link #END} is generated. Run with the repository root to regenerate
 * (bin/gen-config-doc does); MetricsDocTest fails when the file is stale.
 */
public final class MetricsDocGenerator {
  static final String BEGIN = "<!-- BEGIN generated from RdmaMetrics.java by MetricsDocGenerator;"
      + " do not edit by hand. Regenerate: bin/gen-config-doc -->";
  static final String END = "<!-- END generated -->";

  private MetricsDocGenerator() {}

  /** The generated part: one row per metric, with its kind and how the driver sums it. */
  public static String renderTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("| metric | kind | unit | on the driver | meaning |\n|---|---|---|---|---|\n");
    for (RdmaMetrics.Metric m : RdmaMetrics.ALL) {
      String driver = m.clusterOnly ? "only there"
          : m.kind == RdmaMetrics.Kind.COUNTER ? "summed, removed executors kept"
          : m.onCluster() ? "summed over live executors" : "no";
      sb.append("| `").append(m.name).append("` | ").append(m.kind.label)
          .append(" | ").append(m.unit).append(" | ").append(driver).append(" | ")
          .append(m.doc.replace("|", "\\|")).append(" |\n");
    }
    return sb.toString();
  }

  /** The whole file: the hand-written text of {@code current} with the table replaced. */
  public static String render(String current) {
    int b = current.indexOf(BEGIN);
    int e = current.indexOf(END);
    if (b < 0 || e < b) {
      throw new IllegalArgumentException("docs/metrics.md has no '" + BEGIN + "' ... '" + END
          + "' section; put both markers where the metrics table belongs");
    }
    return current.substring(0, b + BEGIN.length()) + "\n\n" + renderTable() + "\n"
        + current.substring(e);
  }

  public static Path docPath(Path root) {
    return root.resolve("docs").resolve("metrics.md");
  }

  public static void main(String[] args) throws IOException {
    Path out = docPath(Paths.get(args.length > 0 ? args[0] : "."));
    String current = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
    Files.write(out, render(current).getBytes(StandardCharsets.UTF_8));
    System.out.println("wrote " + out);
  }
}
