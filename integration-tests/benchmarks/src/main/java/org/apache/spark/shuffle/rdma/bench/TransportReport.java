/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Summarises integration-tests/benchmarks/transport's results.csv: per block size and mode,
 * the median over repetitions of blocks/s, GB/s, client and server CPU seconds per GB and
 * requests per block, with the plugin's ratio to Spark's path; writes report.md and two
 * charts (throughput, server CPU per GB) and prints the table.
 *
 * <pre>TransportReport results.csv OUT_DIR TRANSPORT LOAD_BEFORE LOAD_AFTER</pre>
 */
public final class TransportReport {
  private static final String[] MODES = {"spark", "plugin"};

  private TransportReport() {}

  /** Medians of one (mode, size): blocks/s, GB/s, client s/GB, server s/GB, requests/block. */
  static double[] medians(List<String[]> rows) {
    int n = rows.size();
    double[][] v = new double[5][n];
    for (int i = 0; i < n; i++) {
      String[] r = rows.get(i);
      double blocks = Double.parseDouble(r[3]);
      double gb = Double.parseDouble(r[4]) / 1e9;
      double secs = Double.parseDouble(r[5]);
      v[0][i] = blocks / secs;
      v[1][i] = gb / secs;
      v[2][i] = Double.parseDouble(r[6]) / gb;
      v[3][i] = Double.parseDouble(r[7]) / gb;
      v[4][i] = Double.parseDouble(r[8]) / blocks;
    }
    double[] m = new double[5];
    for (int k = 0; k < 5; k++) {
      Arrays.sort(v[k]);
      m[k] = n % 2 == 1 ? v[k][n / 2] : (v[k][n / 2 - 1] + v[k][n / 2]) / 2;
    }
    return m;
  }

  public static void main(String[] args) throws IOException {
    Path csv = Paths.get(args[0]);
    Path out = Paths.get(args[1]);
    String transport = args[2];
    // size -> mode -> rows
    Map<Integer, Map<String, List<String[]>>> bySize = new TreeMap<>();
    List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    for (String line : lines.subList(1, lines.size())) {
      String[] r = line.split(",");
      bySize.computeIfAbsent(Integer.parseInt(r[2]), k -> new LinkedHashMap<>())
          .computeIfAbsent(r[1], k -> new ArrayList<>()).add(r);
    }
    StringBuilder md = new StringBuilder();
    md.append("# Transport benchmark\n\n")
        .append("Spark's block serving path (network-common, file segments) against the plugin's ")
        .append(transport).append(" transport, server and client JVMs in two network ")
        .append("namespaces. Medians over ").append(reps(bySize)).append(" repetitions, order ")
        .append("alternating. Load average before ").append(args[3]).append(", after ")
        .append(args[4]).append(".\n\n")
        .append("| block | path | blocks/s | GB/s | client CPU s/GB | server CPU s/GB | ")
        .append("requests/block |\n|---|---|---:|---:|---:|---:|---:|\n");
    List<String> cats = new ArrayList<>();
    double[][] gbps = new double[2][bySize.size()];
    double[][] serverCpu = new double[2][bySize.size()];
    int c = 0;
    for (Map.Entry<Integer, Map<String, List<String[]>>> e : bySize.entrySet()) {
      String size = human(e.getKey());
      cats.add(size);
      double[] spark = medians(e.getValue().get("spark"));
      double[] plugin = medians(e.getValue().get("plugin"));
      row(md, size, "spark", spark, null);
      row(md, size, "plugin (" + transport + ")", plugin, spark);
      for (int s = 0; s < 2; s++) {
        double[] m = s == 0 ? spark : plugin;
        gbps[s][c] = m[1];
        serverCpu[s][c] = m[3];
      }
      c++;
    }
    md.append("\nRatios in parentheses are plugin / spark (throughput: higher is better; CPU: ")
        .append("lower is better). CPU is user + system time of the whole JVM (all threads, ")
        .append("GC and JIT included) from /proc/PID/stat over the measured run.\n");
    Files.createDirectories(out);
    Files.write(out.resolve("report.md"), md.toString().getBytes(StandardCharsets.UTF_8));
    List<String> series = List.of("spark (network-common)", "plugin (" + transport + ")");
    Charts.bars(out.resolve("throughput.png"), "Fetch throughput by block size", "GB/s",
        cats, series, gbps, null, null, false);
    Charts.bars(out.resolve("server-cpu.png"), "Serving CPU per GB by block size",
        "server CPU seconds per GB", cats, series, serverCpu, null, null, false);
    System.out.print(md);
  }

  private static int reps(Map<Integer, Map<String, List<String[]>>> bySize) {
    return bySize.values().iterator().next().get(MODES[0]).size();
  }

  private static void row(StringBuilder md, String size, String path, double[] m,
      double[] base) {
    md.append("| ").append(size).append(" | ").append(path).append(" | ")
        .append(cell(m[0], base == null ? Double.NaN : m[0] / base[0], "%.0f")).append(" | ")
        .append(cell(m[1], base == null ? Double.NaN : m[1] / base[1], "%.3f")).append(" | ")
        .append(cell(m[2], base == null ? Double.NaN : m[2] / base[2], "%.2f")).append(" | ")
        .append(cell(m[3], base == null ? Double.NaN : m[3] / base[3], "%.2f")).append(" | ")
        .append(String.format(Locale.ROOT, "%.3f", m[4])).append(" |\n");
  }

  private static String cell(double v, double ratio, String fmt) {
    String s = String.format(Locale.ROOT, fmt, v);
    return Double.isNaN(ratio) ? s : s + String.format(Locale.ROOT, " (%.2fx)", ratio);
  }

  private static String human(int bytes) {
    if (bytes % (1 << 20) == 0) {
      return (bytes >> 20) + " MiB";
    }
    return bytes % 1024 == 0 ? (bytes >> 10) + " KiB" : bytes + " B";
  }
}
