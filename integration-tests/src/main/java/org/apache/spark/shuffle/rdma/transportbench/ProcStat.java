/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU seconds (user + system) of a process from /proc/PID/stat (all threads), and of each of
 * its threads from /proc/PID/task/TID/stat. Server and client run in different network
 * namespaces of one PID namespace (or in one guest), so the client reads the server's figures
 * directly, before and after a measured run.
 */
final class ProcStat {
  /** USER_HZ; 100 on every Linux this runs on (the kernel ABI fixes it for /proc). */
  private static final double TICKS = 100.0;

  private ProcStat() {}

  static double cpuSeconds(long pid) {
    return cpu(pid)[0];
  }

  /** {total, user, system} CPU seconds of a process (all threads). */
  static double[] cpu(long pid) {
    try {
      return parse(read(Paths.get("/proc", Long.toString(pid), "stat")));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot read CPU time of process " + pid, e);
    }
  }

  /**
   * CPU seconds per live thread, keyed "name/tid" (a thread that exits between two samples is
   * missing from the later one; {@link #delta} counts it from zero).
   */
  static Map<String, Double> threadCpuSeconds(long pid) {
    Map<String, Double> m = new TreeMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(
        Paths.get("/proc", Long.toString(pid), "task"))) {
      for (Path t : tasks) {
        String stat;
        try {
          stat = read(t.resolve("stat"));
        } catch (IOException gone) {
          continue; // the thread exited
        }
        m.put(comm(stat) + "/" + t.getFileName(), parse(stat)[0]);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list threads of process " + pid, e);
    }
    return m;
  }

  /** utime + stime in seconds, from one stat line ({@code [0]}; utime, stime in [1], [2]). */
  static double[] parse(String stat) {
    // After the ")" closing comm (which may hold spaces and parentheses): field 3 (state)
    // first; utime and stime are fields 14 and 15.
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
    double u = Long.parseLong(f[11]) / TICKS;
    double s = Long.parseLong(f[12]) / TICKS;
    return new double[] {u + s, u, s};
  }

  /** The comm field (thread name, at most 15 characters) of a stat line. */
  static String comm(String stat) {
    return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  }

  /** Per-thread CPU between two samples; only threads that used any. */
  static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> d = new TreeMap<>();
    for (Map.Entry<String, Double> e : after.entrySet()) {
      double v = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
      if (v > 0.0001) {
        d.put(e.getKey(), v);
      }
    }
    return d;
  }

  /** "name/tid=0.120 s, ..." largest first; "none" when no thread used CPU. */
  static String describe(Map<String, Double> delta) {
    if (delta.isEmpty()) {
      return "none";
    }
    List<Map.Entry<String, Double>> l = new ArrayList<>(delta.entrySet());
    l.sort((a, b) -> Double.compare(b.getValue(), a.getValue()));
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, Double> e : l) {
      if (sb.length() > 0) {
        sb.append(", ");
      }
      sb.append(e.getKey()).append('=').append(String.format(Locale.ROOT, "%.2f", e.getValue()));
    }
    return sb.toString();
  }

  private static String read(Path p) throws IOException {
    return new String(Files.readAllBytes(p), StandardCharsets.US_ASCII);
  }
}
