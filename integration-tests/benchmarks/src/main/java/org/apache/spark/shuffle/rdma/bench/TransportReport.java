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
 * Summarises integration-tests/benchmarks/transport's results.csv (or the Soft-RoCE guest's,
 * integration-tests/softroce/payload/transport-bench-test.sh): per block size and mode, the
 * median over repetitions of blocks/s, GB/s, client and server CPU seconds per GB, server CPU
 * microseconds per block and requests per block, with each plugin mode's ratio to Spark's path
 * (and verbs' ratio to tcp when both ran); writes report.md and two charts (throughput, server
 * CPU per GB) and prints the table. Modes: spark (the baseline, required), plugin (the
 * transport given as TRANSPORT), tcp, verbs, and floor (plain sendfile, no product).
 *
 * <pre>TransportReport results.csv OUT_DIR TRANSPORT LOAD_BEFORE LOAD_AFTER [SETUP]</pre>
 * SETUP describes where the two JVMs ran (default: two network namespaces).
 */
public final class TransportReport {
  private static final String[] MODES = {"spark", "plugin"};
  private static final String DEFAULT_SETUP =
      "server and client JVMs in two network namespaces";

  private TransportReport() {}

  /**
   * Medians of one (mode, size): blocks/s, GB/s, client s/GB, server s/GB, requests/block,
   * server CPU microseconds per block.
   */
  static double[] medians(List<String[]> rows) {
    int n = rows.size();
    double[][] v = new double[6][n];
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
      v[5][i] = Double.parseDouble(r[7]) * 1e6 / blocks;
    }
    double[] m = new double[6];
    for (int k = 0; k < 6; k++) {
      Arrays.sort(v[k]);
      m[k] = n % 2 == 1 ? v[k][n / 2] : (v[k][n / 2 - 1] + v[k][n / 2]) / 2;
    }
    return m;
  }

  /** Rows of results.csv (header skipped) by size, then mode in the order first seen. */
  public static Map<Integer, Map<String, List<String[]>>> bySize(List<String> lines) {
    Map<Integer, Map<String, List<String[]>>> bySize = new TreeMap<>();
    for (String line : lines.subList(1, lines.size())) {
      if (line.isBlank()) {
        continue;
      }
      String[] r = line.split(",");
      bySize.computeIfAbsent(Integer.parseInt(r[2]), k -> new LinkedHashMap<>())
          .computeIfAbsent(r[1], k -> new ArrayList<>()).add(r);
    }
    return bySize;
  }

  /** The modes present, spark first (it must be there: the ratios are against it). */
  static List<String> modes(Map<Integer, Map<String, List<String[]>>> bySize) {
    List<String> modes = new ArrayList<>(List.of("spark"));
    for (Map<String, List<String[]>> m : bySize.values()) {
      if (!m.containsKey("spark")) {
        throw new IllegalArgumentException("results without the spark baseline");
      }
      for (String mode : m.keySet()) {
        if (!modes.contains(mode)) {
          modes.add(mode);
        }
      }
    }
    return modes;
  }

  static String label(String mode, String transport) {
    switch (mode) {
      case "spark": return "spark";
      case "plugin": return "plugin (" + transport + ")";
      case "floor": return "floor (plain sendfile)";
      default: return "plugin (" + mode + ")";
    }
  }

  /** report.md's text. */
  public static String markdown(Map<Integer, Map<String, List<String[]>>> bySize,
      String transport, String loadBefore, String loadAfter, String setup) {
    List<String> modes = modes(bySize);
    List<String> plugins = new ArrayList<>(modes.subList(1, modes.size()));
    plugins.remove("floor");
    StringBuilder md = new StringBuilder();
    md.append("# Transport benchmark\n\n")
        .append("Spark's block serving path (network-common, file segments) against the plugin's ")
        .append(String.join(" and ", plugins.stream().map(m -> m.equals("plugin") ? transport
            : m).toArray(String[]::new))).append(" transport, ").append(setup)
        .append(". Medians over ").append(reps(bySize)).append(" repetitions, order ")
        .append("alternating. Load average before ").append(loadBefore).append(", after ")
        .append(loadAfter).append(".\n\n")
        .append("| block | path | blocks/s | GB/s | client CPU s/GB | server CPU s/GB | ")
        .append("server CPU us/block | requests/block |\n")
        .append("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (Map.Entry<Integer, Map<String, List<String[]>>> e : bySize.entrySet()) {
      String size = human(e.getKey());
      double[] spark = medians(e.getValue().get("spark"));
      for (String mode : modes) {
        List<String[]> rows = e.getValue().get(mode);
        if (rows != null) {
          row(md, size, label(mode, transport), medians(rows), mode.equals("spark") ? null
              : spark);
        }
      }
    }
    md.append("\nRatios in parentheses are plugin / spark (throughput: higher is better; CPU: ")
        .append("lower is better). CPU is user + system time of the whole JVM (all threads, ")
        .append("GC and JIT included) from /proc/PID/stat over the measured run; server CPU ")
        .append("per block is that total divided by the blocks fetched.\n");
    if (modes.contains("floor")) {
      md.append("\nThe floor row is no product: the simplest server, blocking sockets, one ")
          .append("request per group of blocks and one sendfile per block with no framing; its ")
          .append("ratios are floor / spark. It shows what the kernel charges for these bytes ")
          .append("with no server work around them: where a server's CPU is at this row's, ")
          .append("what is left is the kernel's TCP path. It is not always the least: for small ")
          .append("blocks, gathering many into one write costs less than a call per block, and ")
          .append("an event loop's non-blocking sendfile can cost the kernel less than blocking ")
          .append("sends.\n");
    }
    if (modes.contains("tcp") && modes.contains("verbs")) {
      md.append("\nverbs / tcp, same run:\n\n")
          .append("| block | blocks/s | GB/s | client CPU s/GB | server CPU s/GB |\n")
          .append("|---|---:|---:|---:|---:|\n");
      for (Map.Entry<Integer, Map<String, List<String[]>>> e : bySize.entrySet()) {
        if (e.getValue().get("tcp") == null || e.getValue().get("verbs") == null) {
          continue;
        }
        double[] t = medians(e.getValue().get("tcp"));
        double[] v = medians(e.getValue().get("verbs"));
        md.append("| ").append(human(e.getKey()));
        for (int k = 0; k < 4; k++) {
          md.append(" | ").append(String.format(Locale.ROOT, "%.2fx", v[k] / t[k]));
        }
        md.append(" |\n");
      }
    }
    return md.toString();
  }

  public static void main(String[] args) throws IOException {
    Path csv = Paths.get(args[0]);
    Path out = Paths.get(args[1]);
    String transport = args[2];
    Map<Integer, Map<String, List<String[]>>> bySize =
        bySize(Files.readAllLines(csv, StandardCharsets.UTF_8));
    String md = markdown(bySize, transport, args[3], args[4],
        args.length > 5 ? args[5] : DEFAULT_SETUP);
    List<String> modes = modes(bySize);
    List<String> cats = new ArrayList<>();
    double[][] gbps = new double[modes.size()][bySize.size()];
    double[][] serverCpu = new double[modes.size()][bySize.size()];
    int c = 0;
    for (Map.Entry<Integer, Map<String, List<String[]>>> e : bySize.entrySet()) {
      cats.add(human(e.getKey()));
      for (int s = 0; s < modes.size(); s++) {
        List<String[]> rows = e.getValue().get(modes.get(s));
        double[] m = rows == null ? new double[6] : medians(rows);
        gbps[s][c] = m[1];
        serverCpu[s][c] = m[3];
      }
      c++;
    }
    Files.createDirectories(out);
    Files.write(out.resolve("report.md"), md.getBytes(StandardCharsets.UTF_8));
    List<String> series = new ArrayList<>();
    for (String mode : modes) {
      series.add(mode.equals("spark") ? "spark (network-common)" : label(mode, transport));
    }
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
        .append(cell(m[5], base == null ? Double.NaN : m[5] / base[5], "%.1f")).append(" | ")
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
