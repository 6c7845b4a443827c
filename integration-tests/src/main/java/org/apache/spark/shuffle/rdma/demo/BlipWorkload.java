/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * A fabric blip between two stages: a shuffle's map stage runs, then this host's RDMA netdev
 * drops every packet it sends ({@code tc netem loss 100%}) for {@code TWO_HOST_BLIP_S} seconds
 * (default 12) while a reduce over the same map outputs starts. This host's reducers READ the
 * other host's outputs during the outage: their queue pairs run out of transport retries
 * (IBV_WC_RETRY_EXC_ERR after about 4 s under rxe's defaults) or their reconnects time out,
 * and the reader tries again after spark.shuffle.io.retryWait, within
 * spark.shuffle.io.maxRetries, as Spark's own client does. The job must finish with no
 * FetchFailed, no map stage recomputed, {@code reader.fetchRetries} > 0 (the outage was met)
 * and the sort shuffle's result. The servers' keepalive probes
 * (spark.shuffle.rdma.verbs.keepaliveInterval, 5 s in this run) to readers the outage cut off
 * fail too and free those inbound queue pairs ({@code transport.keepaliveFailures} > 0).
 *
 * <p>Environment: {@code TWO_HOST_BLIP_NETDEV} (the netdev the RDMA device sends through;
 * required), {@code TWO_HOST_BLIP_S}.
 */
final class BlipWorkload implements Workload {
  private final RecomputeWatch watch = new RecomputeWatch();
  private final String netdev = System.getenv().getOrDefault("TWO_HOST_BLIP_NETDEV", "");
  private final int seconds = Integer.parseInt(System.getenv().getOrDefault("TWO_HOST_BLIP_S",
      "12"));
  private String applied = "not applied";
  private String lifted = "not lifted";
  private long outageMs = -1;
  private Map<String, Integer> reducers = Map.of();

  @Override
  public String name() {
    return "blip";
  }

  @Override
  public String run(SparkContext sc) throws Exception {
    if (netdev.isEmpty()) {
      throw new IllegalStateException("TWO_HOST_BLIP_NETDEV is not set (the harness passes "
          + "RDMA_NETDEV)");
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
    sc.addSparkListener(watch);
    JavaPairRDD<Integer, Long> summed = FaultWorkload.sums(jsc);
    summed.count(); // the map stage: outputs written and registered on both hosts
    sc.listenerBus().waitUntilEmpty();
    watch.resetResultTasks();
    int failuresBefore = watch.fetchFailures();
    List<String> resubmittedBefore = watch.mapResubmissions();
    long t0 = System.nanoTime();
    long wall0 = System.currentTimeMillis();
    List<String> launches = new java.util.concurrent.CopyOnWriteArrayList<>();
    org.apache.spark.scheduler.SparkListener launchTimes =
        new org.apache.spark.scheduler.SparkListener() {
      @Override
      public void onTaskStart(org.apache.spark.scheduler.SparkListenerTaskStart e) {
        launches.add(String.format("exec %s at %+.1fs", e.taskInfo().executorId(),
            (e.taskInfo().launchTime() - wall0) / 1000.0));
      }
    };
    sc.addSparkListener(launchTimes);
    applied = tc("add", "dev", netdev, "root", "netem", "loss", "100%");
    System.out.println("== blip: " + netdev + " drops every packet for " + seconds + " s ("
        + applied + ")");
    Thread lift = new Thread(() -> {
      try {
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      liftOutage(t0);
    }, "blip-lift");
    lift.start();
    String out;
    try {
      out = FaultWorkload.render(summed.mapValues(v -> v).collect());
    } finally {
      lift.interrupt();
      lift.join();
    }
    sc.listenerBus().waitUntilEmpty();
    reducers = watch.resultTasksByExecutor();
    sc.removeSparkListener(launchTimes);
    // When each reduce task started against the outage (0 = applied): a task that started
    // after it was lifted met no outage.
    System.out.println("== blip: reduce tasks launched " + launches);
    if (watch.fetchFailures() != failuresBefore || !watch.mapResubmissions().equals(
        resubmittedBefore)) {
      System.out.println("== blip: fetch failures " + (watch.fetchFailures() - failuresBefore)
          + ", map resubmissions " + watch.mapResubmissions());
    }
    return out;
  }

  private synchronized void liftOutage(long t0) {
    if (outageMs >= 0) {
      return;
    }
    lifted = tc("del", "dev", netdev, "root");
    outageMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    System.out.println("== blip: outage lifted after " + outageMs + " ms (" + lifted + ")");
  }

  /** Runs {@code tc qdisc <args>}; "ok" or what went wrong. */
  private static String tc(String... args) {
    String[] cmd = new String[args.length + 2];
    cmd[0] = "tc";
    cmd[1] = "qdisc";
    System.arraycopy(args, 0, cmd, 2, args.length);
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String text = new String(p.getInputStream().readAllBytes()).trim();
      int rc = p.waitFor();
      return rc == 0 ? "ok" : "tc exit " + rc + ": " + text;
    } catch (Exception e) {
      return "tc failed: " + e;
    }
  }

  @Override
  public String describe(String result) {
    return result.lines().count() + " keys";
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    checks.check("outage applied and lifted", "ok".equals(applied) && "ok".equals(lifted)
        && outageMs >= TimeUnit.SECONDS.toMillis(seconds) - 100,
        "netem loss 100% on " + netdev + ": add " + applied + ", del " + lifted + ", "
            + outageMs + " ms");
    checks.check("reducers ran on both hosts", reducers.size() == hosts.size(),
        "reduce tasks per executor " + reducers);
    checks.check("no FetchFailed", watch.fetchFailures() == 0,
        watch.fetchFailures() + " fetch failures");
    checks.check("no map stage recomputed", watch.mapResubmissions().isEmpty(),
        "shuffle map stage submissions with attempt > 0: " + watch.mapResubmissions());
    Map<String, Long> total = CounterDelta.total(delta);
    boolean allVerbs = delta.keySet().equals(hosts.keySet()) && delta.values().stream()
        .allMatch(m -> m.getOrDefault("transport.verbs", 0L) == 1L);
    checks.check("every executor on verbs", allVerbs, "plugin reports " + delta.keySet());
    long retries = total.getOrDefault("reader.fetchRetries", -1L);
    checks.check("reads met by the outage were retried", retries > 0,
        "reader.fetchRetries " + retries + ", reader.blockReadFailures "
            + total.get("reader.blockReadFailures") + ", transport.readsFailed "
            + total.get("transport.readsFailed") + ", transport.reconnects "
            + total.get("transport.reconnects")
            + (retries == 0 ? " (0: no read was in flight during the outage)" : ""));
    // The outage also cut every reader off from the servers it had open connections to: each
    // server's keepalive probe to such a reader failed and freed its queue pair (without the
    // probes nothing would, the serving side posts nothing else).
    long probesFailed = total.getOrDefault("transport.keepaliveFailures", -1L);
    StringBuilder inbound = new StringBuilder();
    delta.forEach((e, m) -> inbound.append(" ").append(e).append(": ")
        .append(m.getOrDefault("transport.inboundQueuePairs", -1L)));
    checks.check("inbound queue pairs of unreachable readers freed by keepalive",
        probesFailed > 0, "transport.keepaliveFailures " + probesFailed
            + "; inbound queue pairs now (readers reconnected after the outage):" + inbound);
    for (String zero : new String[] {"reader.failedBlocks", "reader.fallbackBlocks",
        "transport.readsServed"}) {
      long v = total.getOrDefault(zero, -1L);
      checks.check(zero + " == 0", v == 0, "sum over executors " + v);
    }
  }
}
