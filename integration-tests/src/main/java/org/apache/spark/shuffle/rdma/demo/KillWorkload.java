/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.FetchFailed;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;

/**
 * A peer killed mid-read: a shuffle's map stage runs on both hosts, then a reduce over it in
 * which the executor that wrote the most map outputs (the victim) kills itself with SIGKILL
 * while both executors READ from each other. To have the READs in flight when it dies, the
 * victim's reduce task first makes its host drop every packet it sends ({@code tc netem loss
 * 100%}: the other executor's READ responses and its own READ requests stall), then a process
 * it started in a session of its own sends SIGKILL to the victim's JVM 2 s later and lifts the
 * outage 1 s after that. The survivor's READs of the victim fail (the queue pair is flushed
 * by the victim kernel's disconnect or runs out of transport retries); its retry reconnects,
 * the victim's host refuses (nobody listens on that port any more), and a refusal is not
 * retried: Spark gets a FetchFailed naming the victim within the retry budget
 * ({@link #BUDGET_S}), resubmits the map stage and the result must equal the sort shuffle's.
 * On the survivor, the inbound queue pair of the killed reader is freed (its disconnect or the
 * keepalive), so {@code transport.inboundQueuePairs} falls.
 */
final class KillWorkload implements Workload {
  static final int MAPS = 4;
  static final int REDUCERS = 2;
  static final int RECORD_BYTES = 64 * 1024;
  static final int RECORDS_PER_MAP = 64; // 4 MiB per map output
  /** Outage start to SIGKILL, then to the outage's end (on the victim's host). */
  static final int KILL_AFTER_S = 2;
  static final int LIFT_AFTER_KILL_S = 1;
  /**
   * The slowest path to the FetchFailed from the reduce's start: the outage until the
   * kill, queue pairs out of transport retries (about 4 s under rxe), then each of
   * spark.shuffle.io.maxRetries (3) attempts a retryWait (3 s in this run) and a reconnect.
   */
  static final int BUDGET_S = 45;

  private final RecomputeWatch watch = new RecomputeWatch();
  private final Map<String, Long> removedAt = new ConcurrentHashMap<>();
  private final Map<String, String> removedWhy = new ConcurrentHashMap<>();
  private final Map<String, Long> fetchFailedAt = new ConcurrentHashMap<>();
  private final List<String> joinedLater = Collections.synchronizedList(new ArrayList<>());
  private String victim = "?";
  private String survivor = "?";
  private long reduceStartMs = -1;
  private long inboundBefore = -1;

  @Override
  public String name() {
    return "kill";
  }

  /** Per map task RECORDS_PER_MAP incompressible records over REDUCERS partitions. */
  static JavaPairRDD<Integer, byte[]> input(JavaSparkContext jsc) {
    return RandomRecords.shuffled(jsc, MAPS, RECORDS_PER_MAP, RECORD_BYTES, REDUCERS, 91_000L);
  }

  /** One digest line per reduce partition, sorted; {@code victim} dies in its reduce task. */
  static String job(JavaPairRDD<Integer, byte[]> input, String victim) {
    List<String> lines = new ArrayList<>(input.mapPartitionsWithIndex((p, it) -> {
      killIfVictim(victim);
      return Collections.singletonList(CapWorkload.digest(p, it)).iterator();
    }, false).collect());
    Collections.sort(lines);
    return String.join("\n", lines) + "\n";
  }

  /**
   * In a reduce task whose fetch iterator has posted its READs: on {@code victim}, once, the
   * outage, then SIGKILL of this JVM; the task waits for it.
   */
  static void killIfVictim(String victim) throws Exception {
    SparkEnv env = SparkEnv.get();
    if (!env.executorId().equals(victim)) {
      return;
    }
    File dir = env.blockManager().diskBlockManager().localDirs()[0];
    if (!new File(dir, "two-host-kill-armed").createNewFile()) {
      return;
    }
    String host = env.blockManager().blockManagerId().host();
    Process ip = new ProcessBuilder("ip", "-o", "-4", "addr", "show", "to", host)
        .redirectErrorStream(true).start();
    String line = new String(ip.getInputStream().readAllBytes()).trim();
    ip.waitFor();
    String[] f = line.split("\\s+");
    if (f.length < 2) {
      throw new IllegalStateException("no netdev holds " + host + ": " + line);
    }
    String dev = f[1];
    long pid = ProcessHandle.current().pid();
    // Its own session: the lift must run after this JVM is gone.
    String script = "tc qdisc add dev " + dev + " root netem loss 100%; sleep " + KILL_AFTER_S
        + "; kill -9 " + pid + "; sleep " + LIFT_AFTER_KILL_S + "; tc qdisc del dev " + dev
        + " root";
    new ProcessBuilder("setsid", "sh", "-c", script)
        .redirectOutput(new File(dir, "two-host-kill.log")).redirectErrorStream(true).start();
    Thread.sleep(TimeUnit.SECONDS.toMillis(60)); // SIGKILL comes first
    throw new IllegalStateException("executor " + victim + " was not killed within 60 s ("
        + new File(dir, "two-host-kill.log") + ")");
  }

  @Override
  public String run(SparkContext sc) throws Exception {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
    sc.addSparkListener(watch);
    JavaPairRDD<Integer, byte[]> input = input(jsc);
    watch.resetMapTasks();
    input.count(); // the map stage, and one read of every output (indexes cached, connected)
    sc.listenerBus().waitUntilEmpty();
    Map<String, Integer> maps = watch.mapTasksByExecutor();
    victim = maps.entrySet().stream().max(Comparator.comparingInt(Map.Entry::getValue))
        .map(Map.Entry::getKey).orElse("?");
    String v = victim;
    survivor = ExecutorTally.current().executorHosts().keySet().stream()
        .filter(e -> !e.equals(v)).findFirst().orElse("?");
    inboundBefore = RdmaShuffleManager.clusterStats().getOrDefault(survivor, Map.of())
        .getOrDefault("transport.inboundQueuePairs", -1L);
    System.out.println("== kill: map tasks per executor " + maps + "; executor " + victim
        + " dies in the reduce; executor " + survivor + " has " + inboundBefore
        + " inbound queue pair(s)");
    SparkListener times = new SparkListener() {
      @Override
      public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
        removedAt.putIfAbsent(e.executorId(), e.time());
        removedWhy.putIfAbsent(e.executorId(), String.valueOf(e.reason()));
      }

      @Override
      public void onExecutorAdded(org.apache.spark.scheduler.SparkListenerExecutorAdded e) {
        joinedLater.add(e.executorId());
      }

      @Override
      public void onTaskEnd(SparkListenerTaskEnd e) {
        if (e.reason() instanceof FetchFailed) {
          FetchFailed ff = (FetchFailed) e.reason();
          if (ff.bmAddress() != null) {
            fetchFailedAt.putIfAbsent(ff.bmAddress().executorId(), e.taskInfo().finishTime());
          }
        }
      }
    };
    sc.addSparkListener(times);
    watch.resetResultTasks();
    reduceStartMs = System.currentTimeMillis();
    String out;
    try {
      out = job(input, victim);
    } finally {
      sc.listenerBus().waitUntilEmpty();
      sc.removeSparkListener(times);
    }
    return out;
  }

  @Override
  public String describe(String result) {
    return result.lines().count() + " partitions, first " + result.lines().findFirst()
        .orElse("(none)");
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    Long removed = removedAt.get(victim);
    checks.check("the victim was killed", removed != null, "executor " + victim + " on "
        + hosts.get(victim) + (removed == null ? ": never removed"
        : String.format(": removed by Spark %.1f s after the reduce started (%s)",
            (removed - reduceStartMs) / 1000.0, removedWhy.get(victim))));
    List<FetchFailed> named = watch.fetchFailuresFrom(victim);
    Long failed = fetchFailedAt.get(victim);
    double afterStart = failed == null ? -1 : (failed - reduceStartMs) / 1000.0;
    checks.check("FetchFailed naming the killed executor within the retry budget",
        !named.isEmpty() && failed != null && afterStart <= BUDGET_S,
        named.size() + " of " + watch.fetchFailures() + " fetch failures name executor "
            + victim + (failed == null ? "" : String.format("; the first %.1f s after the "
            + "reduce started (budget %d s), %.1f s after Spark removed the executor",
            afterStart, BUDGET_S, removed == null ? Double.NaN : (failed - removed) / 1000.0))
            + (named.isEmpty() ? "" : "; " + FaultWorkload.cause(named.get(0).message())));
    checks.check("map stage resubmitted (recomputed)", !watch.mapResubmissions().isEmpty(),
        "shuffle map stage submissions with attempt > 0: " + watch.mapResubmissions());
    Map<String, Long> s = delta.getOrDefault(survivor, Map.of());
    long inboundAfter = s.getOrDefault("transport.inboundQueuePairs", -1L);
    List<String> newcomers = new ArrayList<>(joinedLater);
    if (!newcomers.isEmpty()) {
      checks.note("executors joined after the kill " + newcomers + ": inbound queue pairs on "
          + survivor + " " + inboundBefore + " before, " + inboundAfter + " after, not checked");
    } else {
      checks.check("the killed reader's inbound queue pair freed on the survivor",
          inboundBefore > 0 && inboundAfter >= 0 && inboundAfter < inboundBefore,
          "transport.inboundQueuePairs on executor " + survivor + ": " + inboundBefore
              + " before the kill, " + inboundAfter + " after the job");
    }
    System.out.println("== kill: survivor " + survivor + ": reader.fetchRetries "
        + s.get("reader.fetchRetries") + ", reader.blockReadFailures "
        + s.get("reader.blockReadFailures") + ", transport.readsFailed "
        + s.get("transport.readsFailed") + ", transport.reconnects "
        + s.get("transport.reconnects") + ", reader.failedBlocks " + s.get("reader.failedBlocks")
        + ", transport.keepaliveFailures " + s.get("transport.keepaliveFailures"));
  }
}
