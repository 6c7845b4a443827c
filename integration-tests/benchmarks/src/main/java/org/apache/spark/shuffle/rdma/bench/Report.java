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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import org.apache.spark.shuffle.rdma.bench.BenchMain.Options;
import org.apache.spark.shuffle.rdma.bench.BenchMain.QueryRun;
import org.apache.spark.shuffle.rdma.bench.BenchMain.Results;
import org.apache.spark.shuffle.rdma.bench.BenchMain.ShuffleRun;
import org.apache.spark.shuffle.rdma.bench.BenchMain.TpcdsPass;

/** Writes report.md, summary.txt, CSVs and PNG charts into the results folder. */
final class Report {
  private Report() {}

  static Path write(Options o, Results r) throws IOException {
    Files.createDirectories(o.results);
    StringBuilder md = new StringBuilder();
    StringBuilder sum = new StringBuilder();
    md.append("# Shuffle benchmark: spark-shuffle-rdma vs Spark's sort shuffle\n\n");
    md.append("- started ").append(r.startedAt).append(", finished ").append(r.finishedAt)
        .append(String.format(" (%.1f min)%n", r.elapsedS / 60));
    md.append("- command: `").append(o.command).append("`\n");
    md.append("- machine: ").append(machine()).append(o.machine.isEmpty() ? "" : "; " + o.machine)
        .append('\n');
    md.append("- Spark ").append(org.apache.spark.package$.MODULE$.SPARK_VERSION())
        .append(", Java ").append(System.getProperty("java.version")).append('\n');
    if (!o.cluster.isEmpty()) md.append("- cluster: ").append(o.cluster).append('\n');
    md.append("- managers: `sort` = Spark's built-in sort shuffle; `rdma` = RdmaShuffleManager "
        + "with spark.shuffle.rdma.transport=tcp (one-sided reads emulated over TCP)");
    if (o.managers.contains("rdma-verbs")) md.append("; `rdma-verbs` = the verbs transport");
    md.append("\n\n");

    if (!r.shuffleRuns.isEmpty()) shuffleSection(o, r, md, sum);
    if (!r.tpcdsPasses.isEmpty()) tpcdsSection(o, r, md, sum);
    if (!r.profiles.isEmpty()) {
      md.append("## Profile (JFR on the executors, one shuffle job per manager)\n\n");
      for (Map.Entry<String, String> e : r.profiles.entrySet()) {
        md.append("### ").append(e.getKey()).append("\n\n").append(e.getValue()).append('\n');
      }
    }
    md.append("## Verdict\n\n");
    if (r.errors.isEmpty()) {
      md.append("All results under every manager equal the sort shuffle's.\n");
      sum.append("correctness: all results equal\n");
    } else {
      md.append("**ERRORS**:\n\n");
      for (String e : r.errors) md.append("- ").append(e).append('\n');
      sum.append("ERRORS: ").append(r.errors.size()).append('\n');
      for (String e : r.errors) sum.append("  ").append(e).append('\n');
    }
    Path report = o.results.resolve("report.md");
    Files.writeString(report, md.toString(), StandardCharsets.UTF_8);
    Files.writeString(o.results.resolve("summary.txt"), sum.toString(), StandardCharsets.UTF_8);
    return report;
  }

  // ---------------------------------------------------------------------------------------

  static void shuffleSection(Options o, Results r, StringBuilder md, StringBuilder sum)
      throws IOException {
    md.append("## Shuffle job\n\n");
    ShuffleRun any = r.shuffleRuns.get(0);
    md.append(String.format("%d records of 8-byte key + %d-byte random value, %d map and %d "
            + "reduce partitions: repartition, groupByKey, reduceByKey, sortByKey "
            + "(Kryo, lz4). %d repetitions per manager, order alternating (ABBA). "
            + "Read stages = stages that read shuffle data; their wall time is the sum of "
            + "(completion - submission) from the listener. Process CPU = utime+stime of "
            + "the executor JVMs (/proc) over the whole job (map + reduce + serving side). "
            + "GB = shuffle bytes read (local + remote).%n%n", any.records,
        o.valueBytes, o.maps, o.reduces, o.reps));
    md.append("| manager | rep | job s | read stages s | shuffle read GB | remote % | GB/s "
        + "| read-stage CPU s | process CPU s | CPU s/GB (read stages) | CPU s/GB (processes) "
        + "| fetch wait p50 ms | p99 ms | plugin remote blocks | index reads | data reads "
        + "| READs per remote block | round trips per fetch (fully cached) |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
        + "|---:|---:|\n");
    StringBuilder csv = new StringBuilder("manager,rep,records,job_ms,read_stage_ms,read_bytes,"
        + "remote_bytes,write_bytes,read_stage_cpu_ns,process_cpu_s,fetch_wait_p50_ms,"
        + "fetch_wait_p99_ms,remote_blocks,local_blocks,plugin_remote_blocks,digest\n");
    for (ShuffleRun s : r.shuffleRuns) {
      md.append(String.format("| %s | %d | %.1f | %.1f | %.3f | %.0f | %.3f | %.1f | %.1f | %.2f "
              + "| %.2f | %d | %d | %s | %s | %s | %s | %s |%n", s.manager, s.rep,
          s.jobWallMs / 1e3,
          s.readS(), s.readGb(), 100.0 * s.totals.remoteBytes / Math.max(1, s.totals.readBytes),
          s.gbPerS(), s.totals.readCpuNs / 1e9, s.procCpuS, s.readCpuPerGb(), s.procCpuPerGb(),
          s.p(50), s.p(99), pl(s, "reader.remoteBlocks"), pl(s, "reader.indexReads"),
          pl(s, "reader.dataReads"), s.manager.equals("sort") ? "-" : String.format("%.3f",
              BenchMain.readsPerBlock(s.plugin)), s.manager.equals("sort") ? "-"
              : String.format("%.3f (%.3f)", BenchMain.ratio(s.plugin, "reader.roundTrips",
                  "reader.fetches"), BenchMain.ratio(s.plugin, "reader.cachedFetchRoundTrips",
                  "reader.cachedFetches"))));
      csv.append(String.join(",", s.manager, "" + s.rep, "" + s.records, "" + s.jobWallMs,
          "" + s.totals.readWallMs, "" + s.totals.readBytes, "" + s.totals.remoteBytes,
          "" + s.totals.writeBytes, "" + s.totals.readCpuNs, String.format("%.2f", s.procCpuS),
          "" + s.p(50), "" + s.p(99), "" + s.totals.remoteBlocks, "" + s.totals.localBlocks,
          pl(s, "reader.remoteBlocks"), '"' + s.digest + '"')).append('\n');
    }
    Files.writeString(o.results.resolve("shuffle.csv"), csv.toString());

    // Medians per manager and median of paired ratios vs sort (rep by rep).
    String[] names = {"read stages s", "job s", "GB/s (read stages)", "CPU s/GB (read stages)",
        "CPU s/GB (processes)", "fetch wait p50 ms", "fetch wait p99 ms"};
    List<ToDoubleFunction<ShuffleRun>> fs = List.of(ShuffleRun::readS,
        s -> s.jobWallMs / 1e3, ShuffleRun::gbPerS, ShuffleRun::readCpuPerGb,
        ShuffleRun::procCpuPerGb, s -> s.p(50), s -> s.p(99));
    md.append("\nMedians, and the median over repetitions of the ratio to sort in the same "
        + "repetition:\n\n| metric |");
    for (String m : o.managers) md.append(' ').append(m).append(" |");
    for (String m : o.managers) if (!m.equals("sort")) md.append(' ').append(m).append("/sort |");
    md.append("\n|---|");
    for (int i = 0; i < o.managers.size() * 2 - 1; i++) md.append("---:|");
    md.append('\n');
    sum.append(String.format("shuffle job (%d reps, %.2f GB shuffle read per run):%n",
        o.reps, median(r.shuffleRuns, "sort", ShuffleRun::readGb)));
    for (int i = 0; i < names.length; i++) {
      md.append("| ").append(names[i]).append(" |");
      for (String m : o.managers) {
        md.append(String.format(" %.3f |", median(r.shuffleRuns, m, fs.get(i))));
      }
      for (String m : o.managers) {
        if (m.equals("sort")) continue;
        double ratio = pairedRatio(r.shuffleRuns, m, fs.get(i));
        md.append(String.format(" **%.3fx** |", ratio));
        sum.append(String.format("  %-24s %s/sort = %.3fx%n", names[i], m, ratio));
      }
      md.append('\n');
    }
    md.append('\n');

    List<String> mgrs = o.managers.stream().filter(m -> r.shuffleRuns.stream()
        .anyMatch(s -> s.manager.equals(m))).toList();
    double[][] thr = new double[1][mgrs.size()];
    double[][][] thrDots = new double[1][mgrs.size()][];
    double[][] cpu = new double[2][mgrs.size()];
    double[][][] cpuDots = new double[2][mgrs.size()][];
    for (int i = 0; i < mgrs.size(); i++) {
      String m = mgrs.get(i);
      thr[0][i] = median(r.shuffleRuns, m, ShuffleRun::gbPerS);
      thrDots[0][i] = values(r.shuffleRuns, m, ShuffleRun::gbPerS);
      cpu[0][i] = median(r.shuffleRuns, m, ShuffleRun::readCpuPerGb);
      cpu[1][i] = median(r.shuffleRuns, m, ShuffleRun::procCpuPerGb);
      cpuDots[0][i] = values(r.shuffleRuns, m, ShuffleRun::readCpuPerGb);
      cpuDots[1][i] = values(r.shuffleRuns, m, ShuffleRun::procCpuPerGb);
    }
    Charts.bars(o.results.resolve("throughput.png"),
        "Shuffle job: read throughput (shuffle GB read / read-stage wall s), median + reps",
        "GB/s", mgrs, List.of("GB/s"), thr, thrDots, null, false);
    Charts.bars(o.results.resolve("cpu-per-gb.png"),
        "Shuffle job: executor CPU seconds per shuffled GB, median + reps", "CPU s / GB", mgrs,
        List.of("read-stage task CPU", "whole executor processes (/proc)"), cpu, cpuDots, null,
        false);
    md.append("![throughput](throughput.png)\n\n![CPU per GB](cpu-per-gb.png)\n\n");
  }

  static String pl(ShuffleRun s, String k) {
    return s.manager.equals("sort") ? "-" : Long.toString(s.plugin.getOrDefault(k, 0L));
  }

  // ---------------------------------------------------------------------------------------

  static void tpcdsSection(Options o, Results r, StringBuilder md, StringBuilder sum)
      throws IOException {
    md.append("## TPC-DS\n\n");
    md.append(String.format("Scale factor %s (io.trino.tpcds %s, Parquet cache `%s`), %d "
            + "queries (Spark's tpcds/q*.sql v1.4), %d pass(es) per manager, order "
            + "alternating. Time = wall time of `collect()` per query. Result check: rows "
            + "sorted, floats to 9 significant digits / 1e-7 relative, against the sort "
            + "pass.%n%n", Tpcds.formatScale(o.sf), "1.4", r.tpcdsDir, o.queries.size(),
        o.tpcdsReps));
    List<String> mgrs = new ArrayList<>();
    for (String m : o.managers) {
      if (r.tpcdsPasses.stream().anyMatch(p -> p.manager.equals(m))) mgrs.add(m);
    }
    Map<String, Map<String, Double>> med = new LinkedHashMap<>();
    Map<String, Double> totals = new LinkedHashMap<>();
    for (String m : mgrs) {
      Map<String, Double> q = new LinkedHashMap<>();
      for (String name : o.queries) {
        List<Double> l = new ArrayList<>();
        for (TpcdsPass p : r.tpcdsPasses) {
          if (p.manager.equals(m) && p.queries.containsKey(name)) {
            l.add(p.queries.get(name).ms / 1e3);
          }
        }
        if (!l.isEmpty()) q.put(name, median(l));
      }
      med.put(m, q);
      totals.put(m, q.values().stream().mapToDouble(Double::doubleValue).sum());
    }
    int equal = 0, compared = 0;
    for (TpcdsPass p : r.tpcdsPasses) {
      if (p.manager.equals("sort")) continue;
      for (QueryRun q : p.queries.values()) {
        compared++;
        if (Boolean.TRUE.equals(q.equal)) equal++;
      }
    }
    md.append("| manager | total s (sum of per-query medians) | ratio to sort | shuffle read GB "
        + "(pass) | results equal to sort |\n|---|---:|---:|---:|---|\n");
    double sortTotal = totals.getOrDefault("sort", Double.NaN);
    StringBuilder tpcdsPerQuery = new StringBuilder();
    for (String m : mgrs) {
      double gb = r.tpcdsPasses.stream().filter(p -> p.manager.equals(m))
          .mapToDouble(p -> p.totals == null ? 0 : p.totals.readBytes / 1e9).max().orElse(0);
      md.append(String.format("| %s | %.1f | %.3fx | %.3f | %s |%n", m, totals.get(m),
          totals.get(m) / sortTotal, gb, m.equals("sort") ? "(reference)"
              : r.tpcdsPasses.stream().filter(p -> p.manager.equals(m)).allMatch(p ->
                  p.queries.values().stream().allMatch(q -> Boolean.TRUE.equals(q.equal)))
                  ? "all " + p1(o.queries.size()) : "**NO**"));
      if (!m.equals("sort")) {
        List<Double> rs = new ArrayList<>();
        double logSum = 0;
        for (Map.Entry<String, Double> e : med.get(m).entrySet()) {
          Double ref = med.get("sort").get(e.getKey());
          if (ref == null || ref <= 0 || e.getValue() <= 0) continue;
          rs.add(e.getValue() / ref);
          logSum += Math.log(e.getValue() / ref);
        }
        String perQuery = String.format("per-query ratio median %.3fx, geometric mean %.3fx",
            median(rs), Math.exp(logSum / Math.max(1, rs.size())));
        tpcdsPerQuery.append("- ").append(m).append("/sort: ").append(perQuery).append('\n');
        sum.append(String.format("TPC-DS SF %s: %d queries, total %s/sort = %.3fx "
                + "(%.1f s vs %.1f s), %s, %d of %d results equal%n",
            Tpcds.formatScale(o.sf), o.queries.size(), m, totals.get(m) / sortTotal,
            totals.get(m), sortTotal, perQuery, equal, compared));
      }
    }
    md.append('\n').append(tpcdsPerQuery);
    md.append("\n| query |");
    for (String m : mgrs) md.append(' ').append(m).append(" s |");
    for (String m : mgrs) if (!m.equals("sort")) md.append(' ').append(m).append("/sort |");
    md.append(" rows | equal |\n|---|");
    for (int i = 0; i < mgrs.size() * 2 - 1; i++) md.append("---:|");
    md.append("---:|---|\n");
    StringBuilder csv = new StringBuilder("query,manager,pass,ms,rows,equal\n");
    for (TpcdsPass p : r.tpcdsPasses) {
      for (Map.Entry<String, QueryRun> e : p.queries.entrySet()) {
        csv.append(String.join(",", e.getKey(), p.manager, "" + p.rep, "" + e.getValue().ms,
            "" + e.getValue().rows, String.valueOf(e.getValue().equal))).append('\n');
      }
    }
    Files.writeString(o.results.resolve("tpcds.csv"), csv.toString());
    List<String> chartQ = new ArrayList<>();
    List<double[]> chartV = new ArrayList<>();
    for (String name : o.queries) {
      if (!med.get("sort").containsKey(name)) continue;
      md.append("| ").append(name).append(" |");
      for (String m : mgrs) md.append(String.format(" %.2f |", med.get(m).getOrDefault(name,
          Double.NaN)));
      double[] ratios = new double[mgrs.size() - 1];
      int k = 0;
      for (String m : mgrs) {
        if (m.equals("sort")) continue;
        double ratio = med.get(m).getOrDefault(name, Double.NaN) / med.get("sort").get(name);
        ratios[k++] = ratio;
        md.append(String.format(" %.2f |", ratio));
      }
      chartQ.add(name);
      chartV.add(ratios);
      int rows = -1;
      Boolean eq = true;
      for (TpcdsPass p : r.tpcdsPasses) {
        QueryRun q = p.queries.get(name);
        if (q == null) continue;
        rows = q.rows;
        if (!p.manager.equals("sort")) eq = eq && Boolean.TRUE.equals(q.equal);
      }
      md.append(' ').append(rows).append(" | ").append(eq ? "yes" : "**NO**").append(" |\n");
    }
    md.append('\n');
    List<String> series = new ArrayList<>();
    for (String m : mgrs) if (!m.equals("sort")) series.add(m + " / sort");
    double[][] vals = new double[series.size()][chartQ.size()];
    for (int c = 0; c < chartQ.size(); c++) {
      for (int s = 0; s < series.size(); s++) vals[s][c] = chartV.get(c)[s];
    }
    Charts.bars(o.results.resolve("tpcds-query-ratio.png"), String.format(
            "TPC-DS SF %s: per-query time ratio to sort (total %s)", Tpcds.formatScale(o.sf),
            series.isEmpty() ? "-" : String.format("%.3fx", totals.get(mgrs.get(1)) / sortTotal)),
        "time / sort time", chartQ, series, vals, null, 1.0, true);
    md.append("![per-query ratio](tpcds-query-ratio.png)\n\n");
  }

  static String p1(int n) {
    return Integer.toString(n);
  }

  // ---------------------------------------------------------------------------------------

  static double[] values(List<ShuffleRun> runs, String m, ToDoubleFunction<ShuffleRun> f) {
    return runs.stream().filter(s -> s.manager.equals(m)).mapToDouble(f).toArray();
  }

  static double median(List<ShuffleRun> runs, String m, ToDoubleFunction<ShuffleRun> f) {
    List<Double> l = new ArrayList<>();
    for (double v : values(runs, m, f)) l.add(v);
    return median(l);
  }

  /** Median over repetitions of f(manager, rep) / f(sort, rep). */
  static double pairedRatio(List<ShuffleRun> runs, String m, ToDoubleFunction<ShuffleRun> f) {
    List<Double> l = new ArrayList<>();
    for (ShuffleRun s : runs) {
      if (!s.manager.equals(m)) continue;
      for (ShuffleRun ref : runs) {
        if (ref.manager.equals("sort") && ref.rep == s.rep) {
          double d = f.applyAsDouble(ref);
          if (d > 0) l.add(f.applyAsDouble(s) / d);
        }
      }
    }
    return median(l);
  }

  static double median(List<Double> l) {
    if (l.isEmpty()) return Double.NaN;
    List<Double> c = new ArrayList<>(l);
    Collections.sort(c);
    int n = c.size();
    return n % 2 == 1 ? c.get(n / 2) : (c.get(n / 2 - 1) + c.get(n / 2)) / 2;
  }

  static String machine() {
    String model = "?";
    int cpus = Runtime.getRuntime().availableProcessors();
    long memKb = 0;
    try {
      for (String l : Files.readAllLines(Paths.get("/proc/cpuinfo"))) {
        if (l.startsWith("model name")) { model = l.substring(l.indexOf(':') + 1).trim(); break; }
      }
      for (String l : Files.readAllLines(Paths.get("/proc/meminfo"))) {
        if (l.startsWith("MemTotal:")) memKb = Long.parseLong(l.replaceAll("[^0-9]", ""));
      }
    } catch (IOException | RuntimeException ignored) {
      // best effort
    }
    String kernel = "?";
    try {
      kernel = Files.readString(Paths.get("/proc/sys/kernel/osrelease")).trim();
    } catch (IOException ignored) {
      // best effort
    }
    return String.format("%s, %d CPUs, %.1f GiB RAM, Linux %s, %s", model, cpus,
        memKb / 1048576.0, kernel, System.getProperty("os.arch"));
  }
}
