/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import scala.Tuple2;

/**
 * A shuffle larger than the executors' cap on registered bytes
 * (spark.shuffle.rdma.maxRegisteredBytes, 20 MiB in the two-host run): {@link #MAPS} map
 * outputs of 16 MiB each, so an executor that writes two registers the first and leaves the
 * second unregistered. Readers fetch the registered outputs' blocks by one-sided READ and the
 * others through Spark's own block transfer service; the result must equal the sort
 * shuffle's, both paths must have carried blocks, and no executor may hold more registered
 * bytes than the cap. The other workloads stay under the cap: the run releases each
 * workload's shuffles when it ends, as the ContextCleaner does.
 */
final class CapWorkload implements Workload {
  static final int MAPS = 4;
  static final int REDUCERS = 4;
  static final int RECORD_BYTES = 64 * 1024;
  static final int RECORDS_PER_MAP = 256; // 16 MiB per map output

  @Override
  public String name() {
    return "cap";
  }

  /** Per map task RECORDS_PER_MAP incompressible records. */
  static JavaPairRDD<Integer, byte[]> input(JavaSparkContext jsc) {
    return RandomRecords.shuffled(jsc, MAPS, RECORDS_PER_MAP, RECORD_BYTES, REDUCERS, 77_000L);
  }

  /** "partition:records:crcSum" of one reduce partition. */
  static String digest(int partition, Iterator<Tuple2<Integer, byte[]>> it) {
    long n = 0;
    long sum = 0;
    while (it.hasNext()) {
      CRC32 crc = new CRC32();
      crc.update(it.next()._2());
      n++;
      sum += crc.getValue();
    }
    return partition + ":" + n + ":" + sum;
  }

  /** The job: one digest line per reduce partition, sorted. */
  static String job(SparkContext sc) {
    List<String> lines = new ArrayList<>(input(JavaSparkContext.fromSparkContext(sc))
        .mapPartitionsWithIndex((p, it) -> Collections.singletonList(digest(p, it)).iterator(),
            false).collect());
    Collections.sort(lines);
    return String.join("\n", lines) + "\n";
  }

  private long cap = -1;

  @Override
  public String run(SparkContext sc) {
    cap = sc.getConf().getSizeAsBytes(RdmaConf.MAX_REGISTERED_BYTES().key(), "0");
    return job(sc);
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    Map<String, Long> total = CounterDelta.total(delta);
    boolean allVerbs = delta.keySet().equals(hosts.keySet()) && delta.values().stream()
        .allMatch(m -> m.getOrDefault("transport.verbs", 0L) == 1L);
    checks.check("every executor on verbs", allVerbs, "plugin reports " + delta.keySet());
    long overCap = total.getOrDefault("registry.outputsOverCap", -1L);
    long registered = total.getOrDefault("registry.registrations", -1L);
    checks.check("outputs over the cap left unregistered", cap > 0 && overCap > 0
        && registered > 0, "cap " + cap + " B; registry.registrations " + registered
        + ", registry.outputsOverCap " + overCap + " of " + MAPS + " map outputs");
    Map<String, Long> held = new TreeMap<>();
    delta.forEach((e, m) -> held.put(e, m.getOrDefault("registry.bytes", -1L)));
    checks.check("registered bytes within the cap on every executor", cap > 0
        && held.values().stream().allMatch(b -> b >= 0 && b <= cap),
        "registry.bytes " + held + ", cap " + cap);
    long oneSided = total.getOrDefault("reader.remoteBlocks", -1L);
    long fallback = total.getOrDefault("reader.fallbackBlocks", -1L);
    long spark = tally.remoteBlocks();
    checks.check("blocks through both paths", oneSided > 0 && fallback > 0
        && oneSided + fallback == spark, "reader.remoteBlocks " + oneSided
        + " (one-sided READ) + reader.fallbackBlocks " + fallback
        + " (Spark's block transfer service) = Spark remote blocks " + spark);
    for (String zero : new String[] {"transport.readsFailed", "reader.failedBlocks"}) {
      long v = total.getOrDefault(zero, -1L);
      checks.check(zero + " == 0", v == 0, "sum over executors " + v);
    }
  }
}
