/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The driver's sums over executors (the "rdmaShuffleCluster" source), kept so that its
 * counters only grow while executors come and go. Each executor's counters restart at 0 in a
 * new executor, and a removed executor's vanish with it: a plain sum over the live executors
 * falls whenever Spark removes one (dynamic allocation, decommissioning, a lost executor),
 * which Prometheus reads as a counter reset ({@code rate()} and {@code increase()} spike).
 *
 * <p>So the driver keeps the last report it saw of each live executor and, when Spark removes
 * one, adds that report's counters (RdmaMetrics.Kind.COUNTER: the {@code isCounter} given) to
 * one retained total per counter name and forgets the executor: thousands of removed executors
 * cost one number per counter. Gauges (current values: registered bytes, connections,
 * executors on verbs) are summed over the live executors only, so a removed executor's share
 * drops out; per-executor settings are left out, as in RdmaMetricsSource.sum (the {@code sum}
 * given). What an executor counted after the last report the driver saw of it is lost: the
 * driver asks executors when a sink reads the source (at most every
 * RdmaMetricsSource.CLUSTER_MAX_AGE_MS), it never hears from a removed one.
 *
 * <p>Reports come from polls ({@link #pollStarted}, one {@link #report} per executor that
 * answered, {@link #pollEnded}), which list the executors after they started. A poll's reply
 * may arrive after Spark removed its executor: then only what it counted beyond the report
 * already retained is added (no double counting), and it does not bring the executor back.
 * For that a removed executor's last counters are held until every poll that may still
 * report it has ended. An executor's counters never fall within one executor, so where two
 * polls overlap and an older reply lands last, each counter keeps the larger value.
 *
 * <p>Which names are counters, and how live reports are summed, are the metrics catalog's
 * (RdmaMetrics, RdmaMetricsSource in the plugin's root package, which uses this package): the
 * driver passes them in, so this package does not depend on its user.
 *
 * <p>Thread-safe.
 */
public final class ClusterTotals {
  private final Predicate<String> isCounter;
  private final Function<Map<String, Map<String, Long>>, Map<String, Long>> sum;
  /** Last report of each live executor (counters: the largest value seen). */
  private final Map<String, Map<String, Long>> live = new HashMap<>();
  /** Counters of every removed executor, summed: one entry per counter name. */
  private final Map<String, Long> retired = new LinkedHashMap<>();
  /** Executors removed while a poll that may report them was running: what was retained. */
  private final Map<String, Departed> departed = new HashMap<>();
  /** Running polls by the tick they started at (value: how many started then). */
  private final TreeMap<Long, Integer> polls = new TreeMap<>();
  /** Orders poll starts and removals. */
  private long tick;

  private static final class Departed {
    final long removedAt;
    final Map<String, Long> counters;

    Departed(long removedAt, Map<String, Long> counters) {
      this.removedAt = removedAt;
      this.counters = counters;
    }
  }

  /**
   * @param isCounter whether a metric name is a counter (retained after its executor left)
   * @param sum the driver's sum of live executors' reports (gauges and counters)
   */
  public ClusterTotals(Predicate<String> isCounter,
      Function<Map<String, Map<String, Long>>, Map<String, Long>> sum) {
    this.isCounter = isCounter;
    this.sum = sum;
  }

  /** Every value summed by name: for drivers built without the metrics catalog (tests). */
  public static Map<String, Long> plainSum(Map<String, Map<String, Long>> perExecutor) {
    Map<String, Long> total = new LinkedHashMap<>();
    perExecutor.values().forEach(r -> r.forEach((k, v) -> total.merge(k, v, Long::sum)));
    return total;
  }

  private boolean isCounter(String name) {
    return isCounter.test(name);
  }

  /** A poll starts; list the executors to ask after this. Returns its token for pollEnded. */
  public synchronized long pollStarted() {
    long t = ++tick;
    polls.merge(t, 1, Integer::sum);
    return t;
  }

  /** The poll started at {@code token} has every reply it will get. */
  public synchronized void pollEnded(long token) {
    polls.computeIfPresent(token, (t, n) -> n == 1 ? null : n - 1);
    long oldest = polls.isEmpty() ? Long.MAX_VALUE : polls.firstKey();
    // A poll that started after a removal did not list that executor: nothing more can come.
    departed.values().removeIf(d -> d.removedAt < oldest);
  }

  /** Executor {@code executorId} answered a poll with {@code stats}. */
  public synchronized void report(String executorId, Map<String, Long> stats) {
    Departed d = departed.get(executorId);
    if (d != null) {
      // Removed while this reply was on its way: add what it counted beyond the retained.
      stats.forEach((k, v) -> {
        if (isCounter(k)) {
          long kept = d.counters.getOrDefault(k, 0L);
          if (v > kept) {
            retired.merge(k, v - kept, Long::sum);
            d.counters.put(k, v);
          }
        }
      });
      return;
    }
    Map<String, Long> last = live.get(executorId);
    Map<String, Long> next = new HashMap<>(stats);
    if (last != null) {
      last.forEach((k, v) -> {
        if (isCounter(k)) {
          next.merge(k, v, Math::max);
        }
      });
    }
    live.put(executorId, next);
  }

  /** Spark removed {@code executorId}: its counters are retained, its gauges dropped. */
  public synchronized void removed(String executorId) {
    if (departed.containsKey(executorId)) {
      return; // retained already
    }
    Map<String, Long> last = live.remove(executorId);
    Map<String, Long> kept = new HashMap<>();
    if (last != null) {
      last.forEach((k, v) -> {
        if (isCounter(k)) {
          retired.merge(k, v, Long::sum);
          kept.put(k, v);
        }
      });
    }
    if (!polls.isEmpty()) {
      departed.put(executorId, new Departed(++tick, kept));
    }
  }

  /**
   * What the driver exports: "executors" (live executors that reported), every gauge summed
   * over them, every counter summed over them plus the retained totals of removed ones.
   */
  public synchronized Map<String, Long> totals() {
    Map<String, Long> total = sum.apply(live);
    retired.forEach((k, v) -> total.merge(k, v, Long::sum));
    return total;
  }

  /** Executors whose reports are held (live ones, and removed ones a running poll may report). */
  public synchronized int executorsHeld() {
    return live.size() + departed.size();
  }
}
