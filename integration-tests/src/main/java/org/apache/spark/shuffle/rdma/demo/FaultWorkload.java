/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.FetchFailed;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import scala.Tuple2;

/**
 * A fault between two stages: a shuffle's map stage runs, then every registration of the
 * executor that wrote most of its map outputs is revoked (keys deregistered, files kept, as
 * when an executor loses its registrations), then a reduce over the same map outputs runs.
 * The other host's reducers READ with revoked keys; by design those READs fail
 * ({@code transport.readsFailed} > 0 here, on verbs the remote access error of a dead rkey),
 * the blocks fail ({@code reader.failedBlocks} > 0), Spark sees a FetchFailed naming the
 * revoked executor, resubmits the map stage, and the result must still equal the sort
 * shuffle's. Still 0 here as on clean runs: {@code reader.fallbackBlocks} (no block fetched by
 * Spark's own client) and {@code transport.readsServed} (no serving CPU).
 */
final class FaultWorkload implements Workload {
  static final int RECORDS = 30000;
  static final int KEYS = 40;
  static final int PARTITIONS = 6;

  private final RecomputeWatch watch = new RecomputeWatch();
  private final String preferredVictim;
  private String victim = "?";
  private int revoked;
  private Map<String, Integer> reducers = Map.of();

  /** {@code preferredVictim}: the executor revoked when it ran as many map tasks as another. */
  FaultWorkload(String preferredVictim) {
    this.preferredVictim = preferredVictim;
  }

  @Override
  public String name() {
    return "fault";
  }

  /** The job: sums per key through reduceByKey. */
  static JavaPairRDD<Integer, Long> sums(JavaSparkContext jsc) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 1; i <= RECORDS; i++) {
      ids.add(i);
    }
    return jsc.parallelize(ids, PARTITIONS).mapToPair(i -> new Tuple2<>(i % KEYS, (long) i))
        .reduceByKey(Long::sum, PARTITIONS);
  }

  /** "key=sum" lines, sorted by key. */
  static String render(List<Tuple2<Integer, Long>> rows) {
    return rows.stream().sorted(Comparator.comparing(Tuple2::_1))
        .map(t -> t._1() + "=" + t._2() + "\n").collect(Collectors.joining());
  }

  @Override
  public String run(SparkContext sc) throws Exception {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
    sc.addSparkListener(watch);
    JavaPairRDD<Integer, Long> summed = sums(jsc);
    watch.resetMapTasks();
    summed.count(); // the map stage: outputs written and registered on both hosts
    sc.listenerBus().waitUntilEmpty();
    Map<String, Integer> maps = watch.mapTasksByExecutor();
    victim = maps.entrySet().stream().max(Comparator.<Map.Entry<String, Integer>>comparingInt(
        Map.Entry::getValue).thenComparing(e -> e.getKey().equals(preferredVictim)))
        .map(Map.Entry::getKey).orElse(preferredVictim);
    System.out.println("== fault: map tasks per executor " + maps + "; revoking executor "
        + victim + "'s registrations");
    String target = victim;
    for (int tries = 0; revoked == 0 && tries < 10; tries++) {
      List<Integer> tasks = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        tasks.add(i);
      }
      revoked = jsc.parallelize(tasks, tasks.size()).map(x -> revokeOnce(target))
          .reduce(Integer::sum);
    }
    // A new reduce over the same map outputs: the map stage is skipped unless outputs are lost.
    sc.listenerBus().waitUntilEmpty();
    watch.resetResultTasks();
    String out = render(summed.mapValues(v -> v).collect());
    sc.listenerBus().waitUntilEmpty();
    reducers = watch.resultTasksByExecutor();
    return out;
  }

  /** In a task: revokes this executor's registrations if it is {@code victim}, once. */
  static int revokeOnce(String victim) throws IOException {
    SparkEnv env = SparkEnv.get();
    if (!env.executorId().equals(victim)) {
      return 0;
    }
    File once = new File(env.blockManager().diskBlockManager().localDirs()[0],
        "two-host-fault-revoked");
    if (!once.createNewFile()) {
      return 0;
    }
    return ((RdmaShuffleManager) env.shuffleManager()).revokeAllRegistrations();
  }

  @Override
  public String describe(String result) {
    return result.lines().count() + " keys, sum "
        + result.lines().mapToLong(l -> Long.parseLong(l.substring(l.indexOf('=') + 1))).sum();
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    checks.check("registrations revoked on one host", revoked > 0,
        revoked + " map outputs revoked on executor " + victim + " (" + hosts.get(victim) + ")");
    // Only a reducer on another executor READs the revoked keys (the victim reads its own
    // outputs from disk): without one the fault is never exercised.
    checks.check("a reducer ran beside the revoked executor", reducers.keySet().stream()
        .anyMatch(e -> !e.equals(victim)), "reduce tasks per executor " + reducers);
    List<FetchFailed> named = watch.fetchFailuresFrom(victim);
    checks.check("FetchFailed naming the revoked executor", !named.isEmpty(),
        named.size() + " of " + watch.fetchFailures() + " fetch failures name executor " + victim
            + (named.isEmpty() ? "" : "; first: " + cause(named.get(0).message())));
    List<String> resubmitted = watch.mapResubmissions();
    checks.check("map stage resubmitted (recomputed)", !resubmitted.isEmpty(),
        "shuffle map stage submissions with attempt > 0: " + resubmitted);
    Map<String, Long> total = CounterDelta.total(delta);
    boolean allVerbs = delta.keySet().equals(hosts.keySet()) && delta.values().stream()
        .allMatch(m -> m.getOrDefault("transport.verbs", 0L) == 1L);
    checks.check("every executor on verbs", allVerbs, "plugin reports " + delta.keySet());
    atLeastOne(checks, total, "transport.readsFailed");
    atLeastOne(checks, total, "reader.failedBlocks");
    long fallback = total.getOrDefault("reader.fallbackBlocks", -1L);
    checks.check("reader.fallbackBlocks == 0", fallback == 0, "sum over executors " + fallback);
    long served = total.getOrDefault("transport.readsServed", -1L);
    checks.check("transport.readsServed == 0", served == 0, "sum over executors " + served);
    System.out.println("== fault: reader.remoteBlocks " + total.get("reader.remoteBlocks")
        + ", Spark remote blocks " + tally.remoteBlocks() + ", READs posted "
        + total.get("transport.readsPosted") + ", failed " + total.get("transport.readsFailed")
        + ", reconnects " + total.get("transport.reconnects"));
  }

  private static void atLeastOne(Checks checks, Map<String, Long> total, String key) {
    long v = total.getOrDefault(key, -1L);
    checks.check(key + " > 0 (by design: READs of revoked keys fail)", v > 0,
        "sum over executors " + v);
  }

  /** The innermost "Caused by" line of a failure's text (else its first line), shortened. */
  static String cause(String s) {
    if (s == null) {
      return "";
    }
    String line = s.lines().filter(l -> l.startsWith("Caused by: ")).reduce((a, b) -> b)
        .orElse(s.lines().findFirst().orElse(""));
    return line.length() > 240 ? line.substring(0, 240) + "..." : line;
  }
}
