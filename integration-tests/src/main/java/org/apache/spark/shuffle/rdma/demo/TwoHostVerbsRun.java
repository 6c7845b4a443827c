/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import scala.Tuple3;

/**
 * The Soft-RoCE two-host run's driver (integration-tests/softroce/payload/two-host-test.sh): on host A
 * it starts a standalone master and worker in this JVM, takes the README demo job's result
 * under Spark's sort shuffle (from {@code DEMO_REFERENCE_FILE}, written on the host by
 * {@link DemoReference}, or computed here in {@code local[2]}), then runs the same job on the
 * cluster (one
 * executor on this host, one on the other host's worker) with the RDMA shuffle manager, and
 * asserts what the run must prove: equal results, both executors on verbs on two different
 * hosts, every remote block through the plugin and READ as designed (one index READ per
 * remote map output and executor, at most one data READ per block, all completed, a fully
 * cached fetch in one round trip), no failed READ, no fallback to
 * Spark's own fetch, no READ served by a CPU, and on kernels that pin page-cache pages
 * (6.2 and later) no copied registration bytes.
 *
 * <p>Arguments: {@code host expectedExecutors records partitions}. Spark settings come as
 * {@code -Dspark.*} system properties. Environment: {@code EXPECT_ZERO_PINNED_COPY=1} makes
 * {@code transport.pinnedCopiedBytes} a check (skipped, with a note, where the plugin does not
 * report it); {@code NODE_SERVICE_SOCKET} (a node service's socket in each guest) runs
 * {@link NodeServiceRun} after the main application, once the files {@code NODE_SERVICE_READY}
 * lists (colon-separated) exist: each service is ready; then {@link ServiceIsolationRun} on
 * this host's service. Exit status 0 only if every check passed.
 */
public final class TwoHostVerbsRun {
  static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";
  static final int MASTER_PORT = 7077;

  private TwoHostVerbsRun() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: TwoHostVerbsRun host expectedExecutors records partitions");
      System.exit(2);
    }
    String host = args[0];
    int executors = Integer.parseInt(args[1]);
    int records = Integer.parseInt(args[2]);
    int partitions = Integer.parseInt(args[3]);
    boolean zeroPinnedCopy = "1".equals(System.getenv("EXPECT_ZERO_PINNED_COPY"));
    Checks checks = new Checks();
    long t0 = System.nanoTime();
    try (StandaloneDaemons daemons = new StandaloneDaemons(host, MASTER_PORT, 1, 768)) {
      progress(t0, "master " + daemons.masterUrl() + " and a worker up in this JVM");
      String reference = reference(records, partitions, t0);
      onCluster(daemons.masterUrl(), executors, records, partitions, reference,
          zeroPinnedCopy, checks, t0);
      // Then a second application on the same cluster, with a node service in each guest.
      String socket = System.getenv("NODE_SERVICE_SOCKET");
      if (socket != null && !socket.isEmpty()) {
        NodeServiceRun.run(daemons.masterUrl(), Path.of(socket),
            System.getenv().getOrDefault("NODE_SERVICE_READY", ""), checks, t0);
        // Then two applications with spark.authenticate on this host's service, read from
        // here: each its own protection domain and secret.
        ServiceIsolationRun.run(Path.of(socket), host, checks, t0);
      }
    }
    progress(t0, checks.allPassed() ? "all checks passed" : "FAILED checks: " + checks.failed());
    System.exit(checks.allPassed() ? 0 : 1);
  }

  /** The sort-shuffle result as {@link DemoReference#render} text. */
  private static String reference(int records, int partitions, long t0) throws Exception {
    String file = System.getenv("DEMO_REFERENCE_FILE");
    if (file != null && !file.isEmpty()) {
      String text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
      progress(t0, "sort-shuffle reference read from " + file + " (computed on the host): "
          + text.lines().limit(2).reduce((a, b) -> a + " " + b).orElse("empty"));
      return text;
    }
    Tuple3<?, ?, ?> r = DemoReference.compute(records, partitions);
    progress(t0, "sort-shuffle reference (local[2]): " + DemoReference.describe(r));
    return DemoReference.render(r);
  }

  private static void onCluster(String masterUrl, int executors, int records, int partitions,
      String reference, boolean zeroPinnedCopy, Checks checks,
      long t0) throws Exception {
    SparkConf conf = new SparkConf().setMaster(masterUrl).setAppName("two-host-verbs")
        .set("spark.shuffle.manager", RDMA_MANAGER)
        .set("spark.cores.max", Integer.toString(executors))
        .set("spark.executor.cores", "1")
        // Hold the first job until every executor has registered.
        .set("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        // Reduce tasks go to whichever executor is free. With Spark's 3 s locality wait, an
        // executor holding over 80% of a shuffle's map outputs can run every reducer itself
        // when its tasks are short, and then nothing is READ across hosts (the fault is
        // never exercised).
        .set("spark.locality.wait", "0")
        .setIfMissing("spark.scheduler.maxRegisteredResourcesWaitingTime", "1200s")
        .set("spark.extraListeners", ExecutorTally.class.getName());
    SparkContext sc = new SparkContext(conf);
    try {
      ExecutorTally tally = ExecutorTally.current();
      boolean joined = tally.awaitExecutors(executors, 1_200_000L);
      Map<String, String> hosts = tally.executorHosts();
      progress(t0, "executors joined: " + hosts);
      if (!checks.check("executors on distinct hosts", joined && hosts.size() == executors
          && new HashSet<>(hosts.values()).size() == executors,
          "want " + executors + " executors on " + executors + " hosts, have " + hosts)) {
        return;
      }
      long start = System.nanoTime();
      Tuple3<?, ?, ?> result = ShuffleDemo.job(sc, records, partitions);
      sc.listenerBus().waitUntilEmpty();
      progress(t0, "demo job on the RDMA shuffle manager done in "
          + (System.nanoTime() - start) / 1_000_000 + " ms: " + DemoReference.describe(result));
      String text = DemoReference.render(result);
      checks.scope("demo");
      checks.check("results equal to sort shuffle", text.equals(reference),
          "rdma " + DemoReference.describe(result) + "; sort shuffle " + reference.lines()
              .filter(l -> !l.startsWith("group ")).reduce((a, b) -> a + " " + b).orElse("?")
              + " groups=" + reference.lines().filter(l -> l.startsWith("group ")).count());
      counters(RdmaShuffleManager.clusterStats(), hosts, tally, zeroPinnedCopy, checks);
      // Then the skewed job, TPC-DS and the fault, each checked over its own run.
      TwoHostWorkloads.runAll(sc, hosts, tally, zeroPinnedCopy, sc.getConf()
          .get("spark.driver.host"), checks, t0);
    } finally {
      sc.stop();
    }
  }

  /** The plugin's counters, per executor and summed, held against Spark's own metrics. */
  static void counters(Map<String, Map<String, Long>> stats, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    counters(stats, hosts, tally, zeroPinnedCopy, true, checks);
  }

  /**
   * As above; {@code everyBlockConsumed} false where a task may stop reading before its last
   * fetched block (a sort-merge join whose other side ended): Spark counts a remote block when
   * the task takes it, the plugin when it hands it over, so there the plugin's count may be
   * the larger.
   */
  static void counters(Map<String, Map<String, Long>> stats, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, boolean everyBlockConsumed, Checks checks) {
    Map<String, Long> total = new TreeMap<>();
    stats.forEach((exec, m) -> {
      System.out.println("== executor " + exec + " on " + hosts.get(exec) + ": " + m);
      m.forEach((k, v) -> total.merge(k, v, Long::sum));
    });
    total.forEach((k, v) -> System.out.printf("== plugin %-32s %14d%n", k, v));
    boolean allVerbs = stats.keySet().equals(hosts.keySet())
        && stats.values().stream().allMatch(m -> m.getOrDefault("transport.verbs", 0L) == 1L);
    checks.check("every executor on verbs", allVerbs,
        "executors " + hosts.keySet() + ", plugin reports " + stats.keySet()
            + " with transport.verbs " + perExecutor(stats, "transport.verbs"));
    long spark = tally.remoteBlocks();
    long plugin = get(total, "reader.remoteBlocks");
    checks.check("remote blocks through the plugin", spark > 0
        && (everyBlockConsumed ? plugin == spark : plugin >= spark),
        "Spark remote blocks " + spark + ", plugin reader.remoteBlocks " + plugin
            + (everyBlockConsumed ? "" : " (at least Spark's: blocks fetched, not all taken)"));
    long index = get(total, "reader.indexReads");
    long data = get(total, "reader.dataReads");
    long posted = get(total, "transport.readsPosted");
    long completed = get(total, "transport.readsCompleted");
    // Each executor READs the index of a remote map output at most once (its cache holds
    // them all here), then one READ per block (adjacent blocks of one output share one).
    // The remote outputs it could READ: those served when the run started plus those
    // registered during it. Not the registry.outputs gauge at the end: the ContextCleaner
    // may have dropped an earlier query's shuffle by then (seen once in TPC-DS: 4 index
    // READs against 3 outputs still registered).
    StringBuilder perExec = new StringBuilder();
    boolean indexOk = true;
    for (Map.Entry<String, Map<String, Long>> e : stats.entrySet()) {
      long remoteOutputs = stats.entrySet().stream().filter(o -> !o.getKey().equals(e.getKey()))
          .mapToLong(o -> o.getValue().getOrDefault(CounterDelta.OUTPUTS_AT_START, 0L)
              + o.getValue().getOrDefault("registry.registrations", 0L)).sum();
      long idx = e.getValue().getOrDefault("reader.indexReads", 0L);
      indexOk &= idx <= remoteOutputs;
      perExec.append(" ").append(e.getKey()).append(": ").append(idx).append(" <= ")
          .append(remoteOutputs);
    }
    long cachedFetches = get(total, "reader.cachedFetches");
    long cachedRounds = get(total, "reader.cachedFetchRoundTrips");
    checks.check("READs per block as designed", indexOk && data >= 1
        && posted == index + data && completed == posted && cachedRounds <= cachedFetches,
        String.format("blocks %d, index READs %d (per executor <= remote map outputs:%s), "
            + "data READs %d, posted %d (= index + data), completed %d; READs per "
            + "block %.3f; fully cached fetches %d in %d round trips (at most one each)", plugin, index,
            perExec, data, posted, completed, plugin == 0 ? 0.0 : (index + data)
            / (double) plugin, cachedFetches, cachedRounds));
    zero(checks, total, "transport.readsFailed");
    zero(checks, total, "reader.failedBlocks");
    zero(checks, total, "reader.fallbackBlocks");
    zero(checks, total, "transport.readsServed");
    String pinned = "transport.pinnedCopiedBytes";
    if (!zeroPinnedCopy) {
      checks.note(pinned + " not checked: EXPECT_ZERO_PINNED_COPY is not set (the guest script "
          + "sets it on kernel 6.2 and later; before 6.2 registrations are private copies)");
    } else if (!stats.values().stream().allMatch(m -> m.containsKey(pinned))) {
      checks.note("transport.pinnedCopiedBytes is not reported by this build of the plugin; "
          + "zero-copy pinning not checked");
    } else {
      zero(checks, total, pinned);
    }
  }

  private static void zero(Checks checks, Map<String, Long> total, String key) {
    boolean present = total.containsKey(key);
    checks.check(key + " == 0", present && total.get(key) == 0L,
        present ? "sum over executors " + total.get(key) : "not reported by any executor");
  }

  private static long get(Map<String, Long> total, String key) {
    return total.getOrDefault(key, -1L);
  }

  private static String perExecutor(Map<String, Map<String, Long>> stats, String key) {
    Map<String, Long> out = new TreeMap<>();
    stats.forEach((e, m) -> out.put(e, m.get(key)));
    return out.toString();
  }

  private static void progress(long t0, String what) {
    System.out.println("== [" + (System.nanoTime() - t0) / 1_000_000_000L + "s] " + what);
  }
}
