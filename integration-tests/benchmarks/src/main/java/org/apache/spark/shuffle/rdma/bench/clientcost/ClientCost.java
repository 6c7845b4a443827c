/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.shuffle.rdma.bench.Charts;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link ClientCostBench} (JMH, with its GC profiler and {@link ProcessCpuProfiler}) and
 * prints one line per row,
 * {@code RESULT path=<path> block=<bytes> ns_per_block=<n> alloc_bytes_per_block=<n>
 * floor_ns=<n> wall_ns_per_block=<n> blocks_per_s=<n>}, where ns_per_block is CPU time of the
 * whole JVM per block and floor_ns the floor path's for the same block size; writes
 * results.csv and report.md. Exit status 0 when every row came back, 1 when one is missing
 * or a benchmark failed (wrong bytes, a lost block), 2 for a usage error.
 *
 * <p>Usage: {@code ClientCost [--smoke] [--sizes 4096,65536,1048576] [--paths
 * floor,reader,verbs,verbs64,spark] [--results DIR] [--load-before "a b c"]}, or
 * {@code ClientCost --charts-only DIR} to draw an earlier run's charts (cpu-SIZE.png) again.
 */
public final class ClientCost {
  private ClientCost() {}

  public static void main(String[] args) throws Exception {
    boolean smoke = false;
    List<String> sizes = List.of("4096", "65536", "1048576");
    List<String> paths = List.of("floor", "reader", "verbs", "verbs64", "spark");
    Path results = null;
    String loadBefore = "";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--smoke": smoke = true; break;
        case "--sizes": sizes = Arrays.asList(args[++i].split(",")); break;
        case "--paths": paths = Arrays.asList(args[++i].split(",")); break;
        case "--results": results = Paths.get(args[++i]); break;
        case "--load-before": loadBefore = args[++i]; break;
        case "--charts-only":
          // Redraws the charts of an earlier run's folder from its results.csv.
          charts(Paths.get(args[++i]));
          return;
        default:
          System.err.println("unknown argument " + args[i] + "; usage: ClientCost [--smoke] "
              + "[--sizes 4096,65536,1048576] [--paths floor,reader,verbs,verbs64,spark] [--results DIR]");
          System.exit(2);
      }
    }
    if (!paths.contains("floor")) {
      System.err.println("--paths must include floor (every row is compared with it)");
      System.exit(2);
    }
    ChainedOptionsBuilder o = new OptionsBuilder()
        .include(ClientCostBench.class.getName() + ".fetch")
        .param("block", sizes.toArray(new String[0]))
        .param("path", paths.toArray(new String[0]))
        .addProfiler(GCProfiler.class)
        .addProfiler(ProcessCpuProfiler.class)
        .shouldFailOnError(true)
        .jvmArgs("-Xmx1g", "-XX:MaxDirectMemorySize=512m", "-XX:+UseParallelGC");
    if (smoke) {
      // Seconds: one short iteration per row, in this JVM. Figures not to be trusted; rows,
      // bytes and the RESULT lines are checked.
      o.forks(0).warmupIterations(1).warmupTime(TimeValue.milliseconds(200))
          .measurementIterations(1).measurementTime(TimeValue.milliseconds(300));
    } else {
      o.forks(1).warmupIterations(3).warmupTime(TimeValue.seconds(1))
          .measurementIterations(5).measurementTime(TimeValue.seconds(2));
    }
    Collection<RunResult> runs;
    try {
      runs = new Runner(o.build()).run();
    } catch (RunnerException e) {
      System.err.println("client-cost: a benchmark failed: " + e.getMessage());
      System.exit(1);
      return;
    }
    Map<String, Row> rows = new LinkedHashMap<>();
    for (RunResult r : runs) {
      Row row = Row.of(r);
      rows.put(row.key(), row);
    }
    List<String> missing = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    for (String size : sizes) {
      Row floor = rows.get("floor/" + size);
      for (String path : paths) {
        Row row = rows.get(path + "/" + size);
        if (row == null || floor == null || !(row.cpuNsPerBlock > 0)) {
          missing.add(path + " " + size);
          continue;
        }
        String line = String.format(Locale.ROOT, "RESULT path=%s block=%s ns_per_block=%.0f "
            + "alloc_bytes_per_block=%.1f floor_ns=%.0f wall_ns_per_block=%.0f "
            + "blocks_per_s=%.0f", path, size, row.cpuNsPerBlock, row.allocPerBlock,
            floor.cpuNsPerBlock, row.wallNsPerBlock, 1e9 / row.wallNsPerBlock);
        System.out.println(line);
        lines.add(line);
      }
    }
    String loadAfter = new String(Files.readAllBytes(Paths.get("/proc/loadavg"))).trim();
    if (results != null) {
      write(results, rows, sizes, paths, smoke, loadBefore, loadAfter);
    }
    if (!missing.isEmpty()) {
      System.err.println("client-cost: rows missing: " + missing);
      System.exit(1);
    }
  }

  /** One benchmark's figures per block. */
  private static final class Row {
    String path;
    String size;
    double wallNsPerBlock;
    double cpuNsPerBlock;
    double allocPerBlock;

    static Row of(RunResult r) {
      Row row = new Row();
      row.path = r.getParams().getParam("path");
      row.size = r.getParams().getParam("block");
      int blocks = ClientCostBench.blocksPerFetch(Integer.parseInt(row.size));
      row.wallNsPerBlock = r.getPrimaryResult().getScore() / blocks;
      Map<String, Result> s = r.getSecondaryResults();
      Result cpu = s.get("cpu.ns/op");
      Result alloc = s.get("gc.alloc.rate.norm");
      row.cpuNsPerBlock = cpu == null ? Double.NaN : cpu.getScore() / blocks;
      row.allocPerBlock = alloc == null ? Double.NaN : alloc.getScore() / blocks;
      return row;
    }

    String key() {
      return path + "/" + size;
    }
  }

  private static void write(Path dir, Map<String, Row> rows, List<String> sizes,
      List<String> paths, boolean smoke, String loadBefore, String loadAfter) throws IOException {
    Files.createDirectories(dir);
    StringBuilder csv = new StringBuilder(
        "path,block,cpu_ns_per_block,wall_ns_per_block,alloc_bytes_per_block,floor_cpu_ns\n");
    StringBuilder md = new StringBuilder();
    md.append("# Reducer cost per block (integration-tests/benchmarks/client-cost")
        .append(smoke ? " --smoke: figures not to be trusted" : "").append(")\n\n")
        .append("Load average before: ").append(loadBefore).append("; after: ")
        .append(loadAfter).append("; ").append(Runtime.getRuntime().availableProcessors())
        .append(" CPUs; ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.version")).append(".\n\n")
        .append("| block | path | CPU ns/block | over floor | wall ns/block | bytes allocated"
            + "/block | blocks/s (one thread) |\n|---|---|---|---|---|---|---|\n");
    for (String size : sizes) {
      Row floor = rows.get("floor/" + size);
      for (String path : paths) {
        Row r = rows.get(path + "/" + size);
        if (r == null || floor == null) {
          continue;
        }
        csv.append(String.format(Locale.ROOT, "%s,%s,%.1f,%.1f,%.1f,%.1f%n", path, size,
            r.cpuNsPerBlock, r.wallNsPerBlock, r.allocPerBlock, floor.cpuNsPerBlock));
        md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f |%n",
            human(Integer.parseInt(size)), path, r.cpuNsPerBlock,
            r.cpuNsPerBlock - floor.cpuNsPerBlock, r.wallNsPerBlock, r.allocPerBlock,
            1e9 / r.wallNsPerBlock));
      }
    }
    Files.writeString(dir.resolve("results.csv"), csv);
    Files.writeString(dir.resolve("report.md"), md);
    charts(dir);
  }

  /**
   * One chart per block size from the folder's results.csv, {@code cpu-<size>.png}: CPU ns
   * per block by path, the floor as a dashed line (the paths' scales differ by 1,000x across
   * sizes, so one chart each).
   */
  static void charts(Path dir) throws IOException {
    Map<String, List<String[]>> bySize = new LinkedHashMap<>();
    List<String> csv = Files.readAllLines(dir.resolve("results.csv"));
    for (String line : csv.subList(1, csv.size())) {
      String[] f = line.split(",");
      bySize.computeIfAbsent(f[1], k -> new ArrayList<>()).add(f);
    }
    for (Map.Entry<String, List<String[]>> e : bySize.entrySet()) {
      List<String> paths = new ArrayList<>();
      double[][] cpu = new double[1][e.getValue().size()];
      double floor = Double.NaN;
      for (int i = 0; i < e.getValue().size(); i++) {
        String[] f = e.getValue().get(i);
        paths.add(f[0]);
        cpu[0][i] = Double.parseDouble(f[2]);
        floor = Double.parseDouble(f[5]);
      }
      Charts.bars(dir.resolve("cpu-" + e.getKey() + ".png"),
          "Reducer CPU per " + human(Integer.parseInt(e.getKey())) + " block (dashed: the "
              + "floor, a plain copy)", "CPU ns per block", paths, List.of("CPU ns per block"),
          cpu, null, floor, false);
    }
  }

  private static String human(int bytes) {
    return bytes >= 1 << 20 ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
  }
}
