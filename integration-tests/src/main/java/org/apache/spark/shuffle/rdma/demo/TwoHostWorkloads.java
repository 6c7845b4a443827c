/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;

/**
 * The two-host run's workloads after the demo, in the same application (a second one would
 * start two more executor JVMs, minutes under emulation): the skewed job, a zip of two
 * shuffles over a held receive pool, three TPC-DS queries, a fabric outage the reader retries
 * through, a shuffle larger than the executors' cap on registered bytes, a fault ending in a
 * recomputed stage (it revokes every registration of one executor) and a peer killed
 * mid-read (it loses an executor, so it runs last), in that order. After each one its
 * shuffles are released as the ContextCleaner would ({@link ShuffleRelease}), so each starts
 * with nothing registered and only the cap workload meets the cap. Each one's result must
 * equal the sort shuffle's ({@code <TWO_HOST_REFERENCE_DIR>/<name>.txt}, written on the host
 * by {@link WorkloadReferences}); a job that fails fails its check; its counters are checked
 * over
 * its own run ({@link CounterDelta}).
 *
 * <p>Environment: {@code TWO_HOST_REFERENCE_DIR} (required), {@code TWO_HOST_TPCDS_DIR} (the
 * TPC-DS data and queries, required when tpcds runs), {@code TWO_HOST_WORKLOADS} (a comma
 * list, default {@link #ALL}).
 */
final class TwoHostWorkloads {
  static final String ALL = "skew,poolpressure,tpcds,blip,cap,fault,kill";

  private TwoHostWorkloads() {}

  /** The workloads named in {@code names}, {@code victim} the fault's preferred executor. */
  static List<Workload> select(String names, Path tpcdsDir, String victim) {
    List<Workload> out = new ArrayList<>();
    for (String n : names.split(",")) {
      switch (n.trim()) {
        case "skew": out.add(new SkewWorkload()); break;
        case "poolpressure": out.add(new PoolPressureWorkload()); break;
        case "tpcds": out.add(new TpcdsWorkload(tpcdsDir)); break;
        case "blip": out.add(new BlipWorkload()); break;
        case "cap": out.add(new CapWorkload()); break;
        case "fault": out.add(new FaultWorkload(victim)); break;
        case "kill": out.add(new KillWorkload()); break;
        case "": break;
        default: throw new IllegalArgumentException("TWO_HOST_WORKLOADS: unknown workload '"
            + n + "' (known: " + ALL + ")");
      }
    }
    return out;
  }

  /**
   * Runs every selected workload on {@code sc} and makes its checks. {@code driverHost}: the
   * fault revokes an executor on the other host when both ran as many map tasks.
   */
  static void runAll(SparkContext sc, Map<String, String> hosts, ExecutorTally tally,
      boolean zeroPinnedCopy, String driverHost, Checks checks, long t0) throws Exception {
    String refDir = System.getenv("TWO_HOST_REFERENCE_DIR");
    String names = System.getenv().getOrDefault("TWO_HOST_WORKLOADS", ALL);
    String tpcds = System.getenv().getOrDefault("TWO_HOST_TPCDS_DIR", "");
    String victim = hosts.entrySet().stream().filter(e -> !e.getValue().equals(driverHost))
        .map(Map.Entry::getKey).findFirst().orElse("?");
    List<Workload> workloads = select(names, Path.of(tpcds.isEmpty() ? "." : tpcds), victim);
    checks.scope("");
    if (!checks.check("sort-shuffle references present", refDir != null && !refDir.isEmpty(),
        "TWO_HOST_REFERENCE_DIR=" + refDir)) {
      return;
    }
    ShuffleRelease release = new ShuffleRelease(sc);
    release.releaseAll(checks, "demo");
    for (Workload w : workloads) {
      checks.scope(w.name());
      Path refFile = Path.of(refDir, w.name() + ".txt");
      if (!checks.check("sort-shuffle reference present", Files.isRegularFile(refFile),
          refFile.toString())) {
        continue;
      }
      String reference = Files.readString(refFile, StandardCharsets.UTF_8);
      tally.resetCounts();
      Map<String, Map<String, Long>> before = RdmaShuffleManager.clusterStats();
      long start = System.nanoTime();
      progress(t0, w.name() + ": started");
      String result;
      try {
        result = w.run(sc);
      } catch (Exception e) {
        checks.check("job succeeded", false, e.toString());
        continue;
      }
      sc.listenerBus().waitUntilEmpty();
      Map<String, Map<String, Long>> delta =
          CounterDelta.between(before, RdmaShuffleManager.clusterStats());
      progress(t0, w.name() + ": done in " + (System.nanoTime() - start) / 1_000_000 + " ms, "
          + tally.remoteBlocks() + " remote blocks");
      checks.check("results equal to sort shuffle", w.sameResult(reference, result),
          "rdma " + w.describe(result) + "; sort shuffle " + w.describe(reference));
      w.checkCounters(delta, hosts, tally, zeroPinnedCopy, checks);
      if (!"kill".equals(w.name())) { // the kill is last; its victim is gone
        release.releaseAll(checks, w.name());
      }
    }
    checks.scope("");
  }

  private static void progress(long t0, String what) {
    System.out.println("== [" + (System.nanoTime() - t0) / 1_000_000_000L + "s] " + what);
  }
}
