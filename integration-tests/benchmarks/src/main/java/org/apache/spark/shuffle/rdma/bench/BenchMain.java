/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The benchmark driver that integration-tests/benchmarks/run spark-submits onto its
 * multi-host standalone cluster. For each shuffle manager in turn (alternating order per
 * repetition) it starts a fresh application (so fresh executors), warms it up, and measures:
 * the shuffle job ({@link ShuffleJob}), then the TPC-DS queries ({@link Tpcds}); every result
 * under rdma must equal the result under sort. Writes the raw numbers, a Markdown report and
 * PNG charts into the results folder and exits 1 on any mismatch.
 */
public final class BenchMain {
  static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";
  static final boolean INJECT_MISMATCH = "1".equals(System.getenv("SRB_BENCH_INJECT_MISMATCH"));

  private final Options o;
  private final SparkConf base;
  private final long t0 = System.nanoTime();
  final Results results = new Results();

  BenchMain(Options o) {
    this.o = o;
    this.base = new SparkConf();
  }

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    BenchMain b = new BenchMain(o);
    int rc;
    try {
      rc = b.runAll();
    } catch (Throwable t) {
      b.progress("FAILED: " + t);
      t.printStackTrace();
      b.results.errors.add("benchmark failed: " + t);
      try {
        Report.write(b.o, b.results);
      } catch (Throwable ignored) {
        // best effort
      }
      rc = 1;
    }
    System.exit(rc);
  }

  // ---------------------------------------------------------------------------------------

  int runAll() throws Exception {
    Files.createDirectories(o.results);
    results.startedAt = java.time.ZonedDateTime.now().toString();
    results.command = o.command;
    progress("results in " + o.results + "; managers " + o.managers + "; phases "
        + o.phases);
    Path tpcdsDir = Tpcds.cacheDir(o.tpcdsCache, o.sf);
    results.tpcdsDir = tpcdsDir.toString();

    if (o.phases.contains("tpcds") && !Tpcds.isCached(tpcdsDir)) {
      progress("phase tpcds-gen: SF " + Tpcds.formatScale(o.sf) + " into " + tpcdsDir);
      SparkSession s = session("sort", "tpcds-gen", null);
      try {
        Tpcds.generate(s, o.sf, tpcdsDir, this::progress);
      } finally {
        stop(s);
      }
      progress("phase tpcds-gen done");
    } else if (o.phases.contains("tpcds")) {
      progress("TPC-DS SF " + Tpcds.formatScale(o.sf) + " cached in " + tpcdsDir);
    }

    // One application (fresh executors) per manager and repetition; in it the shuffle job,
    // then, in the first --tpcds-reps repetitions, a TPC-DS pass. Order alternates (ABBA).
    boolean shuffle = o.phases.contains("shuffle");
    boolean tpcds = o.phases.contains("tpcds");
    long records = ShuffleJob.recordsFor(o.volumeGb * 1e9, o.valueBytes);
    results.records = records;
    int rounds = Math.max(shuffle ? o.reps : 0, tpcds ? o.tpcdsReps : 0);
    for (int rep = 1; rep <= rounds; rep++) {
      for (String m : order(rep)) {
        boolean doShuffle = shuffle && rep <= o.reps;
        boolean doTpcds = tpcds && rep <= o.tpcdsReps;
        SparkSession s = session(m, doTpcds ? "shuffle-tpcds" : "shuffle", null);
        try {
          if (doShuffle) {
            progress(String.format("phase shuffle rep %d of %d: %s (%d records)", rep, o.reps,
                m, records));
            results.shuffleRuns.add(shuffleRun(s, m, rep, records));
            checkShuffleDigests();
          }
          if (doTpcds) tpcdsPass(s, m, rep, tpcdsDir);
        } finally {
          stop(s);
        }
      }
    }
    if (tpcds) compareTpcds();

    if (o.profile) {
      for (String m : o.managers) {
        Path dir = o.results.resolve("jfr").resolve(m);
        Files.createDirectories(dir);
        progress("phase profile: " + m + " (JFR on executors, one shuffle job)");
        SparkSession s = session(m, "profile", "-XX:+FlightRecorder "
            + "-XX:StartFlightRecording=settings=profile,dumponexit=true,filename=" + dir + "/");
        try {
          results.profileRuns.add(shuffleRun(s, m, 0, records));
        } finally {
          stop(s);
        }
        results.profiles.put(m, JfrSummary.summarize(waitForJfr(dir)));
      }
    }

    results.finishedAt = java.time.ZonedDateTime.now().toString();
    results.elapsedS = (System.nanoTime() - t0) / 1e9;
    Path report = Report.write(o, results);
    progress("report: " + report);
    System.out.println(Files.readString(o.results.resolve("summary.txt")));
    if (!results.errors.isEmpty()) {
      for (String e : results.errors) progress("ERROR: " + e);
      return 1;
    }
    progress("done, all results equal");
    return 0;
  }

  /** Managers in the order of one repetition: reversed on even repetitions (ABBA). */
  List<String> order(int rep) {
    List<String> l = new ArrayList<>(o.managers);
    if (rep % 2 == 0) Collections.reverse(l);
    return l;
  }

  // ---------------------------------------------------------------------------------------

  ShuffleRun shuffleRun(SparkSession s, String manager, int rep, long records)
      throws Exception {
    {
      SparkContext sc = s.sparkContext();
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
      StageMetrics metrics = new StageMetrics();
      sc.addSparkListener(metrics);
      warmUp(jsc);
      sc.listenerBus().waitUntilEmpty();
      metrics.reset();
      Map<Long, String> pids = ProcCpu.executorPids(sc.applicationId());
      Map<String, Long> pluginBefore = pluginTotals(manager);
      double cpuBefore = ProcCpu.total(pids.keySet());
      long start = System.nanoTime();
      String digest = ShuffleJob.run(jsc, records, o.valueBytes, o.maps, o.reduces, 42);
      long wallMs = (System.nanoTime() - start) / 1_000_000;
      double cpuAfter = ProcCpu.total(pids.keySet());
      sc.listenerBus().waitUntilEmpty();
      Map<String, Long> pluginAfter = pluginTotals(manager);

      ShuffleRun r = new ShuffleRun();
      r.manager = manager;
      r.rep = rep;
      r.records = records;
      r.jobWallMs = wallMs;
      r.totals = metrics.totals();
      r.procCpuS = cpuAfter - cpuBefore;
      r.executorPids = pids.size();
      r.digest = digest;
      r.plugin = diff(pluginAfter, pluginBefore);
      r.stages = metrics.stages();
      progress(String.format("  %s: job %.1f s, read stages %.1f s, %.3f GB read (%.0f%% "
              + "remote), read-stage CPU %.1f s, executor processes CPU %.1f s (%d JVMs), "
              + "fetch wait p50/p99 %d/%d ms%s", manager, wallMs / 1e3,
          r.totals.readWallMs / 1e3, r.readGb(), 100.0 * r.totals.remoteBytes
              / Math.max(1, r.totals.readBytes), r.totals.readCpuNs / 1e9, r.procCpuS,
          r.executorPids, r.p(50), r.p(99), pluginLine(r)));
      sc.removeSparkListener(metrics);
      checkPlugin(manager, r.totals.remoteBlocks, r.plugin, "shuffle rep " + rep, true);
      if (!manager.equals("sort")) {
        checkReadPath("shuffle job under " + manager + " rep " + rep, r.plugin);
      }
      return r;
    }
  }

  static String pluginLine(ShuffleRun r) {
    if (r.plugin.isEmpty()) return "";
    return String.format("; plugin: %d remote blocks, %d index reads, %d data reads, "
            + "READs per remote block %.3f, round trips per fetch %.3f (per fully cached "
            + "fetch %.3f)",
        r.plugin.getOrDefault("reader.remoteBlocks", 0L),
        r.plugin.getOrDefault("reader.indexReads", 0L),
        r.plugin.getOrDefault("reader.dataReads", 0L), readsPerBlock(r.plugin),
        ratio(r.plugin, "reader.roundTrips", "reader.fetches"),
        ratio(r.plugin, "reader.cachedFetchRoundTrips", "reader.cachedFetches"));
  }

  /** Target of the read path on the shuffle job (issue 13): at most this many READs a block. */
  static final double MAX_READS_PER_BLOCK = 1.1;

  /** (index READs + data READs) / remote blocks; 0 without blocks. */
  static double readsPerBlock(Map<String, Long> plugin) {
    long blocks = plugin.getOrDefault("reader.remoteBlocks", 0L);
    return blocks == 0 ? 0 : (plugin.getOrDefault("reader.indexReads", 0L)
        + plugin.getOrDefault("reader.dataReads", 0L)) / (double) blocks;
  }

  static double ratio(Map<String, Long> plugin, String num, String den) {
    long d = plugin.getOrDefault(den, 0L);
    return d == 0 ? 0 : plugin.getOrDefault(num, 0L) / (double) d;
  }

  /**
   * The shuffle job's read path does what it was built to: at most {@link
   * #MAX_READS_PER_BLOCK} READs per remote block (each index read once per executor and
   * output, one READ per block), and every fetch whose indexes were cached in one round trip.
   */
  void checkReadPath(String what, Map<String, Long> plugin) {
    double perBlock = readsPerBlock(plugin);
    if (perBlock > MAX_READS_PER_BLOCK) {
      results.errors.add(String.format("%s: %.3f READs per remote block (index %d + data %d "
              + "for %d blocks), over the target %.1f", what, perBlock,
          plugin.getOrDefault("reader.indexReads", 0L),
          plugin.getOrDefault("reader.dataReads", 0L),
          plugin.getOrDefault("reader.remoteBlocks", 0L), MAX_READS_PER_BLOCK));
    }
    long cached = plugin.getOrDefault("reader.cachedFetches", 0L);
    long cachedRounds = plugin.getOrDefault("reader.cachedFetchRoundTrips", 0L);
    if (cached == 0 || cachedRounds > cached) {
      results.errors.add(String.format("%s: %d fully cached fetches took %d round trips "
          + "(at most one each expected, and some such fetches)", what, cached, cachedRounds));
    }
  }

  /**
   * The rdma runs must have read their remote blocks through the plugin. Exact for the RDD
   * job; for SQL only "some", since Spark's task metrics and the plugin count batched
   * (AQE-coalesced, contiguous) block reads differently.
   */
  void checkPlugin(String manager, long remoteBlocks, Map<String, Long> plugin, String what,
      boolean exact) {
    if (manager.equals("sort")) return;
    long viaPlugin = plugin.getOrDefault("reader.remoteBlocks", -1L);
    if (remoteBlocks > 0 && (exact ? viaPlugin != remoteBlocks : viaPlugin <= 0)) {
      results.errors.add(String.format("%s under %s: %d remote blocks fetched but the "
          + "plugin's reader counted %d", what, manager, remoteBlocks, viaPlugin));
    }
    if (remoteBlocks == 0) {
      results.errors.add(what + " under " + manager + ": no remote blocks at all; the "
          + "executors are not on different hosts");
    }
  }

  void checkShuffleDigests() {
    String ref = null;
    for (ShuffleRun r : results.shuffleRuns) {
      if (!r.digest.contains("ordered=true")) {
        results.errors.add("shuffle job under " + r.manager + " rep " + r.rep
            + ": sort output out of order: " + r.digest);
      }
      if (ref == null) ref = r.digest;
      else if (!ref.equals(r.digest)) {
        String e = "shuffle job result under " + r.manager + " rep " + r.rep + " differs: "
            + r.digest + " vs " + ref;
        if (!results.errors.contains(e)) results.errors.add(e);
      }
    }
  }

  /** A small shuffle so that executors are up, classes loaded and connections made. */
  void warmUp(JavaSparkContext jsc) {
    List<Integer> l = new ArrayList<>();
    for (int i = 0; i < 200_000; i++) l.add(i);
    jsc.parallelize(l, 8).mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
        .reduceByKey(Long::sum, 8).count();
  }

  // ---------------------------------------------------------------------------------------

  void tpcdsPass(SparkSession s, String manager, int rep, Path dir) throws Exception {
    List<String> queries = o.queries;
    progress(String.format("phase tpcds pass %d of %d: %s, %d queries", rep, o.tpcdsReps,
        manager, queries.size()));
    TpcdsPass pass = new TpcdsPass();
    pass.manager = manager;
    pass.rep = rep;
    {
      SparkContext sc = s.sparkContext();
      StageMetrics metrics = new StageMetrics();
      sc.addSparkListener(metrics);
      Tpcds.registerViews(s, dir);
      warmUp(JavaSparkContext.fromSparkContext(sc));
      s.sql("SELECT count(*) FROM store_sales").collectAsList();
      sc.listenerBus().waitUntilEmpty();
      metrics.reset();
      Map<String, Long> pluginBefore = pluginTotals(manager);
      long passStart = System.nanoTime();
      int n = 0;
      for (String q : queries) {
        n++;
        String text = Tpcds.queryText(q);
        sc.setJobDescription(manager + " " + q);
        long start = System.nanoTime();
        List<Row> rows;
        try {
          rows = s.sql(text).collectAsList();
        } catch (RuntimeException e) {
          // A failing query is an error, but the others still run and get reported.
          String msg = e.toString().split("\n", 2)[0];
          results.errors.add("TPC-DS " + q + " failed under " + manager + ": " + msg);
          progress("  tpcds " + manager + " query " + n + " of " + queries.size() + ": " + q
              + " FAILED: " + msg);
          continue;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        QueryRun qr = new QueryRun();
        qr.ms = ms;
        qr.rows = rows.size();
        qr.canonical = Tpcds.canonical(rows);
        if (INJECT_MISMATCH && !manager.equals("sort") && n == 1) {
          // Self-test of the mismatch path (SRB_BENCH_INJECT_MISMATCH=1): must exit 1.
          qr.canonical = new ArrayList<>(qr.canonical);
          qr.canonical.add("injected row");
        }
        pass.queries.put(q, qr);
        progress(String.format("  tpcds %s query %d of %d: %s %.2f s, %d rows (pass %.0f s)",
            manager, n, queries.size(), q, ms / 1e3, rows.size(),
            (System.nanoTime() - passStart) / 1e9));
      }
      pass.totalMs = (System.nanoTime() - passStart) / 1_000_000;
      sc.listenerBus().waitUntilEmpty();
      pass.totals = metrics.totals();
      pass.plugin = diff(pluginTotals(manager), pluginBefore);
      sc.removeSparkListener(metrics);
      sc.setJobDescription(null);
      checkPlugin(manager, pass.totals.remoteBlocks, pass.plugin, "TPC-DS pass " + rep, false);
      progress(String.format("  tpcds %s total %.1f s, %.3f GB shuffle read, %d remote "
              + "blocks (plugin reader: %d)", manager, pass.totalMs / 1e3,
          pass.totals.readBytes / 1e9, pass.totals.remoteBlocks,
          pass.plugin.getOrDefault("reader.remoteBlocks", 0L)));
    }
    results.tpcdsPasses.add(pass);
  }

  void compareTpcds() {
    TpcdsPass ref = null;
    for (TpcdsPass p : results.tpcdsPasses) {
      if (p.manager.equals("sort")) { ref = p; break; }
    }
    if (ref == null) return;
    for (TpcdsPass p : results.tpcdsPasses) {
      if (p == ref) continue;
      for (Map.Entry<String, QueryRun> e : p.queries.entrySet()) {
        QueryRun want = ref.queries.get(e.getKey());
        QueryRun got = e.getValue();
        got.equal = want != null && Tpcds.sameResult(want.canonical, got.canonical);
        if (want != null) want.equal = want.equal == null ? Boolean.TRUE : want.equal;
        if (!got.equal) {
          results.errors.add(String.format("TPC-DS %s: result under %s (pass %d, %d rows) "
              + "differs from sort (%d rows)", e.getKey(), p.manager, p.rep, got.rows,
              want == null ? -1 : want.rows));
          writeMismatch(e.getKey(), p, want, got);
        }
      }
    }
  }

  void writeMismatch(String q, TpcdsPass p, QueryRun want, QueryRun got) {
    try {
      Path d = o.results.resolve("mismatches");
      Files.createDirectories(d);
      Files.write(d.resolve(q + "-sort.txt"), want == null ? List.of() : want.canonical);
      Files.write(d.resolve(q + "-" + p.manager + "-pass" + p.rep + ".txt"), got.canonical);
    } catch (IOException ignored) {
      // the error itself is recorded
    }
  }

  // ---------------------------------------------------------------------------------------

  SparkSession session(String manager, String label, String extraExecutorOptions)
      throws InterruptedException {
    SparkConf c = base.clone().setAppName("bench-" + label + "-" + manager);
    switch (manager) {
      case "sort":
        c.set("spark.shuffle.manager", "sort");
        break;
      case "rdma":
        c.set("spark.shuffle.manager", RDMA_MANAGER).set("spark.shuffle.rdma.transport", "tcp");
        break;
      case "rdma-verbs":
        c.set("spark.shuffle.manager", RDMA_MANAGER)
            .set("spark.shuffle.rdma.transport", "verbs");
        break;
      default:
        throw new IllegalArgumentException("unknown manager " + manager);
    }
    if (extraExecutorOptions != null) {
      c.set("spark.executor.extraJavaOptions",
          (c.get("spark.executor.extraJavaOptions", "") + " " + extraExecutorOptions).trim());
    }
    SparkSession s = SparkSession.builder().config(c).getOrCreate();
    SparkContext sc = s.sparkContext();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (sc.statusTracker().getExecutorInfos().length < o.executors + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("only " + (sc.statusTracker().getExecutorInfos().length
            - 1) + " of " + o.executors + " executors registered in 180 s");
      }
      Thread.sleep(200);
    }
    return s;
  }

  void stop(SparkSession s) {
    s.stop();
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
  }

  /** Sum over executors of the plugin's counters (RdmaShuffleManager.clusterStats()). */
  @SuppressWarnings("unchecked")
  static Map<String, Long> pluginTotals(String manager) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (manager.equals("sort")) return out;
    try {
      Class<?> c = Class.forName(RDMA_MANAGER, true,
          Thread.currentThread().getContextClassLoader());
      Map<String, Map<String, Long>> stats =
          (Map<String, Map<String, Long>>) c.getMethod("clusterStats").invoke(null);
      for (Map<String, Long> m : stats.values()) {
        for (Map.Entry<String, Long> e : m.entrySet()) {
          out.merge(e.getKey(), ((Number) e.getValue()).longValue(), Long::sum);
        }
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read the plugin's counters", e);
    }
    return out;
  }

  static Map<String, Long> diff(Map<String, Long> after, Map<String, Long> before) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Map.Entry<String, Long> e : after.entrySet()) {
      out.put(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L));
    }
    return out;
  }

  List<Path> waitForJfr(Path dir) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    List<Path> files = List.of();
    long lastSize = -1;
    while (System.nanoTime() < deadline) {
      try (var st = Files.list(dir)) {
        files = st.filter(p -> p.toString().endsWith(".jfr")).sorted().toList();
      }
      long size = 0;
      for (Path p : files) size += Files.size(p);
      if (files.size() >= o.executors && size == lastSize && size > 0) break;
      lastSize = size;
      Thread.sleep(1000);
    }
    progress("  JFR recordings: " + files);
    return files;
  }

  void progress(String s) {
    long el = (System.nanoTime() - t0) / 1_000_000_000L;
    System.out.printf("[bench %02d:%02d] %s%n", el / 60, el % 60, s);
    System.out.flush();
  }

  // ---------------------------------------------------------------------------------------

  /** Command-line options (the run script passes them all). */
  static final class Options {
    Path results = Paths.get("target/results");
    Path tpcdsCache = Paths.get("/var/cache/spark-shuffle-rdma");
    int reps = 3, tpcdsReps = 1, executors = 2, maps = 16, reduces = 32;
    int valueBytes = ShuffleJob.VALUE_BYTES;
    double volumeGb = 2.0, sf = 1.0;
    boolean profile, smoke;
    List<String> managers = new ArrayList<>(List.of("sort", "rdma"));
    List<String> phases = new ArrayList<>(List.of("shuffle", "tpcds"));
    List<String> queries = Tpcds.allQueries();
    String command = "", machine = "", cluster = "";

    static Options parse(String[] a) {
      Options o = new Options();
      for (int i = 0; i < a.length; i++) {
        String k = a[i];
        String v = i + 1 < a.length ? a[i + 1] : null;
        switch (k) {
          case "--results": o.results = Paths.get(v); i++; break;
          case "--tpcds-cache": o.tpcdsCache = Paths.get(v); i++; break;
          case "--reps": o.reps = Integer.parseInt(v); i++; break;
          case "--tpcds-reps": o.tpcdsReps = Integer.parseInt(v); i++; break;
          case "--executors": o.executors = Integer.parseInt(v); i++; break;
          case "--maps": o.maps = Integer.parseInt(v); i++; break;
          case "--reduces": o.reduces = Integer.parseInt(v); i++; break;
          case "--volume-gb": o.volumeGb = Double.parseDouble(v); i++; break;
          case "--value-bytes":
            o.valueBytes = Integer.parseInt(v);
            if (o.valueBytes < 1 || o.valueBytes > (64 << 20)) {
              throw new IllegalArgumentException("--value-bytes must be in [1, 64 MiB]: " + v);
            }
            i++;
            break;
          case "--sf": o.sf = Double.parseDouble(v); i++; break;
          case "--managers": o.managers = new ArrayList<>(Arrays.asList(v.split(","))); i++;
            break;
          case "--phases": o.phases = new ArrayList<>(Arrays.asList(v.split(","))); i++; break;
          case "--queries":
            o.queries = v.equals("all") ? Tpcds.allQueries()
                : new ArrayList<>(Arrays.asList(v.split(",")));
            i++;
            break;
          case "--profile": o.profile = true; break;
          case "--smoke": o.smoke = true; break;
          case "--command": o.command = v; i++; break;
          case "--machine": o.machine = v; i++; break;
          case "--cluster": o.cluster = v; i++; break;
          default: throw new IllegalArgumentException("unknown option " + k);
        }
      }
      if (!o.managers.contains("sort")) o.managers.add(0, "sort");
      return o;
    }
  }

  /** Everything measured. */
  static final class Results {
    String startedAt, finishedAt, command, tpcdsDir;
    double elapsedS;
    long records;
    final List<ShuffleRun> shuffleRuns = new ArrayList<>();
    final List<ShuffleRun> profileRuns = new ArrayList<>();
    final List<TpcdsPass> tpcdsPasses = new ArrayList<>();
    final Map<String, String> profiles = new LinkedHashMap<>();
    final List<String> errors = new ArrayList<>();
  }

  /** One measured shuffle job. */
  static final class ShuffleRun {
    String manager, digest;
    int rep, executorPids;
    long records, jobWallMs;
    double procCpuS;
    StageMetrics.Totals totals;
    Map<String, Long> plugin = new LinkedHashMap<>();
    List<StageMetrics.Stage> stages = new ArrayList<>();

    double readGb() {
      return totals.readBytes / 1e9;
    }

    double readS() {
      return totals.readWallMs / 1e3;
    }

    double gbPerS() {
      return readGb() / Math.max(1e-9, readS());
    }

    double readCpuPerGb() {
      return totals.readCpuNs / 1e9 / Math.max(1e-9, readGb());
    }

    double procCpuPerGb() {
      return procCpuS / Math.max(1e-9, readGb());
    }

    long p(int pct) {
      List<Long> l = new ArrayList<>(totals.fetchWaits);
      if (l.isEmpty()) return 0;
      Collections.sort(l);
      int i = (int) Math.ceil(pct / 100.0 * l.size()) - 1;
      return l.get(Math.max(0, Math.min(l.size() - 1, i)));
    }
  }

  /** One TPC-DS pass under one manager. */
  static final class TpcdsPass {
    String manager;
    int rep;
    long totalMs;
    StageMetrics.Totals totals;
    Map<String, Long> plugin = new LinkedHashMap<>();
    final Map<String, QueryRun> queries = new LinkedHashMap<>();
  }

  /** One query's run. */
  static final class QueryRun {
    long ms;
    int rows;
    Boolean equal;
    List<String> canonical;
  }
}
