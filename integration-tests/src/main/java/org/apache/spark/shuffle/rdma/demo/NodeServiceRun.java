/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.apache.spark.FetchFailed;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.shuffle.rdma.RdmaShuffleDataIO;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import scala.Tuple2;
import scala.Tuple3;

/**
 * The two-host run's node-service application (issue 26 on real verbs), after the main one
 * on the same standalone cluster: a node service in each guest
 * ({@code bin/shuffle-rdma-service --transport verbs}, started by two-host-test.sh), dynamic
 * allocation with neither Spark's shuffle service nor shuffle tracking. Job 1 shuffles and
 * every executor hands its map outputs to its host's service; dynamic allocation releases
 * every executor; job 2 reads the same shuffle from the services alone: the same result, no
 * map task re-run, no fetch failure, every block READ over verbs by executors that registered
 * nothing themselves. At the end the driver's host's service holds nothing of the
 * application (the driver released it there); the other host's service releases it when its
 * lease on the driver ends (two-host-test.sh checks both logs).
 */
final class NodeServiceRun {
  private static final int RECORDS = 20_000;
  private static final int MAP_TASKS = 4;
  private static final int REDUCE_PARTITIONS = 6;
  /** The marker output's shuffle id: far above the ids this application's jobs take. */
  private static final int MARKER_SHUFFLE = 1_000_000;

  private NodeServiceRun() {}

  /** What Spark saw: executors coming and going, map tasks, fetch failures, blocks. */
  static final class Events extends SparkListener {
    private final Set<String> live = new HashSet<>();
    private final Map<String, String> hosts = new TreeMap<>();
    private int added;
    private int removed;
    private int mapTasks;
    private int fetchFailures;
    private long remoteBlocks;
    private long localBlocks;

    @Override
    public synchronized void onExecutorAdded(SparkListenerExecutorAdded e) {
      live.add(e.executorId());
      hosts.put(e.executorId(), e.executorInfo().executorHost());
      added++;
      notifyAll();
    }

    @Override
    public synchronized void onExecutorRemoved(SparkListenerExecutorRemoved e) {
      live.remove(e.executorId());
      removed++;
      notifyAll();
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
      if (e.taskType().equals("ShuffleMapTask")) {
        mapTasks++;
      }
      if (e.reason() instanceof FetchFailed) {
        fetchFailures++;
      }
      if (e.taskMetrics() != null) {
        remoteBlocks += e.taskMetrics().shuffleReadMetrics().remoteBlocksFetched();
        localBlocks += e.taskMetrics().shuffleReadMetrics().localBlocksFetched();
      }
    }

    synchronized void reset() {
      mapTasks = 0;
      fetchFailures = 0;
      remoteBlocks = 0;
      localBlocks = 0;
    }

    synchronized boolean await(java.util.function.Predicate<Events> cond, long timeoutMs)
        throws InterruptedException {
      long end = System.currentTimeMillis() + timeoutMs;
      while (!cond.test(this)) {
        long left = end - System.currentTimeMillis();
        if (left <= 0) {
          return false;
        }
        wait(Math.min(left, 1000));
      }
      return true;
    }
  }

  /**
   * @param readyFiles colon-separated files that exist once each host's service is ready
   *     (two-host-test.sh touches them); empty: none to wait for
   */
  static void run(String masterUrl, Path socket, String readyFiles, Checks checks, long t0)
      throws Exception {
    checks.scope("nodeservice");
    long until = System.currentTimeMillis() + 900_000L;
    for (String f : readyFiles.split(":")) {
      while (!f.isEmpty() && !java.nio.file.Files.exists(Path.of(f))
          && System.currentTimeMillis() < until) {
        Thread.sleep(1000);
      }
      boolean ready = f.isEmpty() || java.nio.file.Files.exists(Path.of(f));
      if (!checks.check("node service ready", ready,
          ready ? f : f + " not there within 900 s")) {
        return;
      }
    }
    SparkConf conf = new SparkConf().setMaster(masterUrl).setAppName("two-host-node-service")
        .set("spark.shuffle.manager", TwoHostVerbsRun.RDMA_MANAGER)
        .set(RdmaConf.SERVICE_SOCKET().key(), socket.toString())
        .set(org.apache.spark.internal.config.package$.MODULE$.SHUFFLE_IO_PLUGIN_CLASS().key(),
            RdmaShuffleDataIO.class.getName())
        .set("spark.executor.cores", "1")
        .set("spark.cores.max", "2")
        .set("spark.locality.wait", "0")
        .set("spark.dynamicAllocation.enabled", "true")
        .set("spark.shuffle.service.enabled", "false")
        .set("spark.dynamicAllocation.shuffleTracking.enabled", "false")
        .set("spark.dynamicAllocation.minExecutors", "0")
        .set("spark.dynamicAllocation.initialExecutors", "2")
        .set("spark.dynamicAllocation.maxExecutors", "2")
        .set("spark.dynamicAllocation.executorIdleTimeout", "5s")
        .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s");
    SparkContext sc = new SparkContext(conf);
    try {
      Events events = new Events();
      sc.addSparkListener(events);
      boolean two = events.await(e -> e.hosts.size() >= 2, 1_200_000L);
      Map<String, String> hosts;
      synchronized (events) {
        hosts = new TreeMap<>(events.hosts);
      }
      progress(t0, "node service app " + sc.applicationId() + ": executors " + hosts);
      if (!checks.check("executors on both hosts", two
          && new HashSet<>(hosts.values()).size() == 2, "have " + hosts)) {
        return;
      }
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
      List<Integer> input = IntStream.rangeClosed(1, RECORDS).boxed()
          .collect(Collectors.toList());
      JavaPairRDD<Integer, Long> summed = jsc.parallelize(input, MAP_TASKS)
          .mapToPair(i -> new Tuple2<>(i % 50, (long) i))
          .reduceByKey(Long::sum, REDUCE_PARTITIONS);
      Map<Integer, Long> expected = new HashMap<>();
      for (int i = 1; i <= RECORDS; i++) {
        expected.merge(i % 50, (long) i, Long::sum);
      }

      long start = System.nanoTime();
      Collected first = collect(summed);
      sc.listenerBus().waitUntilEmpty();
      progress(t0, "node service job 1 done in " + (System.nanoTime() - start) / 1_000_000
          + " ms; writers " + first.totals);
      checks.check("job 1: results equal", first.rows.equals(expected), first.rows.size()
          + " keys");
      long handedOver = first.get("registry.handedOver");
      // Job 2 proves every output was handed over: one that was not goes with its executor,
      // and its blocks end in a fetch failure and a map task run again.
      checks.check("job 1: map outputs handed to the node services", handedOver > 0
          && first.get("registry.notHandedOver") == 0 && first.get("registry.outputs") == 0,
          "handedOver " + handedOver + " (executors that reduced), notHandedOver "
              + first.get("registry.notHandedOver") + ", registered by executors "
              + first.get("registry.outputs"));
      progress(t0, "this host's node service: " + stats(socket));

      int started;
      synchronized (events) {
        started = events.added;
      }
      boolean released = events.await(e -> e.live.isEmpty(), 300_000L)
          && sc.getExecutorIds().isEmpty();
      progress(t0, "executors released by dynamic allocation: " + released + " (" + started
          + " started)");
      if (!checks.check("every executor released by dynamic allocation", released,
          "still live " + sc.getExecutorIds())) {
        return;
      }

      events.reset();
      start = System.nanoTime();
      Collected again = collect(summed);
      sc.listenerBus().waitUntilEmpty();
      long job2Ms = (System.nanoTime() - start) / 1_000_000;
      progress(t0, "node service job 2 done in " + job2Ms + " ms (new executors started for "
          + "it); readers " + again.totals + " on " + again.executors);
      int mapTasks;
      int fetchFailures;
      long spark;
      long sparkLocal;
      synchronized (events) {
        mapTasks = events.mapTasks;
        fetchFailures = events.fetchFailures;
        spark = events.remoteBlocks;
        sparkLocal = events.localBlocks;
      }
      checks.check("job 2: results equal", again.rows.equals(expected), again.rows.size()
          + " keys");
      checks.check("job 2: no map task re-run, no fetch failure", mapTasks == 0
          && fetchFailures == 0, mapTasks + " map tasks, " + fetchFailures + " fetch failures");
      checks.check("job 2: every block remote, through the plugin", spark > 0 && sparkLocal == 0
          && again.get("reader.remoteBlocks") == spark,
          "Spark remote " + spark + ", local " + sparkLocal + "; plugin reader.remoteBlocks "
              + again.get("reader.remoteBlocks"));
      checks.check("job 2: READ over verbs from the node services", again.allVerbs
          && again.get("transport.readsCompleted") > 0
          && again.get("transport.readsFailed") == 0
          && again.get("reader.fallbackBlocks") == 0 && again.get("reader.failedBlocks") == 0
          && again.get("registry.outputs") == 0 && again.get("registry.handedOver") == 0,
          "verbs on every reader " + again.allVerbs + ", READs completed "
              + again.get("transport.readsCompleted") + ", failed "
              + again.get("transport.readsFailed") + ", fallback "
              + again.get("reader.fallbackBlocks") + ", failed blocks "
              + again.get("reader.failedBlocks") + ", outputs the readers registered "
              + again.get("registry.outputs") + " (none: the bytes came from the services)");
      // The driver's release must find something here whatever the map tasks' placement:
      // dynamic allocation may have released this host's executor before job 1 ran (its
      // executors start minutes apart under emulation), leaving this service nothing.
      String marker = handOverMarker(socket, sc.applicationId());
      checks.check("a marker output of the application handed to this host's service",
          marker == null, marker == null ? stats(socket).toString() : marker);
    } finally {
      sc.stop();
    }
    ServiceStats end = stats(socket);
    progress(t0, "this host's node service after the application: " + end);
    checks.check("the driver's host's service released the application", end.outputs() == 0
        && end.openDescriptors() == 0 && end.registeredBytes() == 0 && end.handOvers() > 0,
        end.toString());
    checks.scope("");
  }

  /**
   * Hands one small output of {@code appId} to the service as an executor would (a shuffle id
   * Spark does not use here); null when taken, else why not.
   */
  private static String handOverMarker(Path socket, String appId) throws java.io.IOException {
    Path dir = java.nio.file.Files.createTempDirectory("node-service-marker");
    Path data = java.nio.file.Files.write(dir.resolve("marker.data"), new byte[64]);
    Path index = dir.resolve("marker.index");
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(
        java.nio.file.Files.newOutputStream(index))) {
      out.writeLong(0);
      out.writeLong(64);
    }
    try (ExecutorHandOver h = new ExecutorHandOver(socket, appId, 60_000)) {
      HandOverAnswer a = h.handOver(MARKER_SHUFFLE, 0, data.toFile(), index.toFile(), null,
          ChecksumAlgorithm.NONE);
      return a != null ? null : String.valueOf(h.lastProblem());
    }
  }

  private static ServiceStats stats(Path socket) throws java.io.IOException {
    try (HandOverClient c = HandOverClient.connect(socket, 30_000)) {
      return c.stats();
    }
  }

  /** A job's rows and the counters of the executors that ran it (taken in the tasks). */
  private static final class Collected {
    final Map<Integer, Long> rows = new HashMap<>();
    final Map<String, Long> totals = new TreeMap<>();
    final Set<String> executors = new HashSet<>();
    boolean allVerbs = true;

    long get(String key) {
      return totals.getOrDefault(key, -1L);
    }
  }

  /**
   * Collects {@code rdd} and, after each partition, the counters of the executor that ran it:
   * taken inside the tasks, because dynamic allocation may release an executor before the
   * driver could ask. Counters only grow, so each executor's largest snapshot covers all it
   * did; summed over executors.
   */
  private static Collected collect(JavaPairRDD<Integer, Long> rdd) {
    List<Tuple3<List<Tuple2<Integer, Long>>, String, Map<String, Long>>> parts =
        rdd.mapPartitions(it -> {
          List<Tuple2<Integer, Long>> data = new ArrayList<>();
          it.forEachRemaining(data::add);
          SparkEnv env = SparkEnv.get();
          Map<String, Long> stats = new HashMap<>(
              ((RdmaShuffleManager) env.shuffleManager()).localStats());
          List<Tuple3<List<Tuple2<Integer, Long>>, String, Map<String, Long>>> one =
              new ArrayList<>();
          one.add(new Tuple3<>(data, env.executorId(), stats));
          return one.iterator();
        }).collect();
    Collected c = new Collected();
    Map<String, Map<String, Long>> perExecutor = new HashMap<>();
    for (Tuple3<List<Tuple2<Integer, Long>>, String, Map<String, Long>> p : parts) {
      p._1().forEach(kv -> c.rows.put(kv._1(), kv._2()));
      Map<String, Long> max = perExecutor.computeIfAbsent(p._2(), k -> new HashMap<>());
      p._3().forEach((k, v) -> max.merge(k, v, Math::max));
    }
    perExecutor.forEach((exec, m) -> {
      c.executors.add(exec);
      c.allVerbs &= m.getOrDefault("transport.verbs", 0L) == 1L;
      m.forEach((k, v) -> c.totals.merge(k, v, Long::sum));
    });
    return c;
  }

  private static void progress(long t0, String what) {
    System.out.println("== [" + (System.nanoTime() - t0) / 1_000_000_000L + "s] " + what);
  }
}
