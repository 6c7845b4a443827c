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
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * A sort-merge-join-shaped task on a receive pool that unconsumed blocks fill: each reduce
 * task zips two shuffles (both fetch iterators open at once, as Spark's SortMergeJoin has
 * them) and consumes one input whole before it takes anything from the other. Both inputs'
 * indexes are cached on every executor by an earlier job over each, so each iterator posts
 * its data READs as one batch when it is created: the first input's (zipPartitions creates
 * its iterator first) ahead of the second's on the one queue pair to the other host. The
 * first input's blocks (520 KiB each, a 1 MiB buddy block of the two-host run's 4 MiB pool,
 * at least four remote per task) fill the pool and stay there, unconsumed, while the task
 * takes the second input first, whose READs find no memory. They must land outside the pool
 * (spark.shuffle.rdma.verbs.poolWait) rather than wait for a release only this task could
 * make: the job must finish within {@link #DEADLINE_S}, its results equal to the sort
 * shuffle's, with transport.poolOverflows above 0 (the condition was hit). (A first version
 * cached only the second input and relied on the first's index round to put its data READs
 * behind; under emulation they were not, and the case was never reached: 0 overflows.)
 */
final class PoolPressureWorkload implements Workload {
  static final int MAPS = 12;
  static final int REDUCERS = 2;
  static final int RECORDS = 8;
  static final int RECORD_BYTES = 65 * 1024;
  static final int DEADLINE_S = 240;

  @Override
  public String name() {
    return "poolpressure";
  }

  /** One input: per map task and reduce partition, RECORDS incompressible records. */
  static JavaPairRDD<Integer, byte[]> input(JavaSparkContext jsc, int seed) {
    List<Integer> maps = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      maps.add(m);
    }
    return jsc.parallelize(maps, MAPS).flatMapToPair(m -> {
      Random rnd = new Random(seed * 1000L + m);
      List<Tuple2<Integer, byte[]>> out = new ArrayList<>(REDUCERS * RECORDS);
      for (int r = 0; r < REDUCERS; r++) {
        for (int i = 0; i < RECORDS; i++) {
          byte[] v = new byte[RECORD_BYTES];
          rnd.nextBytes(v);
          out.add(new Tuple2<>(r, v));
        }
      }
      return out.iterator();
    }).partitionBy(new HashPartitioner(REDUCERS));
  }

  /** "partition:records:crcSum" of one input's iterator, consumed whole. */
  private static String digest(Iterator<Tuple2<Integer, byte[]>> it) {
    long n = 0;
    long sum = 0;
    int p = -1;
    while (it.hasNext()) {
      Tuple2<Integer, byte[]> t = it.next();
      CRC32 crc = new CRC32();
      crc.update(t._2());
      p = t._1();
      n++;
      sum += crc.getValue();
    }
    return p + ":" + n + ":" + sum;
  }

  /** The job: one "a=p:n:crc b=p:n:crc" line per reduce partition, sorted. */
  static String job(SparkContext sc) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
    JavaPairRDD<Integer, byte[]> a = input(jsc, 1);
    JavaPairRDD<Integer, byte[]> b = input(jsc, 2);
    // Reads each input once on every executor: its map outputs' indexes are cached there.
    warm(a);
    warm(b);
    List<String> lines = new ArrayList<>(a.zipPartitions(b, (ia, ib) -> {
      String second = digest(ib); // b whole first, while a's fetched blocks wait in the pool
      return Collections.singletonList("a=" + digest(ia) + " b=" + second).iterator();
    }).collect());
    Collections.sort(lines);
    return String.join("\n", lines) + "\n";
  }

  private static void warm(JavaPairRDD<Integer, byte[]> input) {
    input.mapPartitions(it -> {
      long n = 0;
      while (it.hasNext()) {
        it.next();
        n++;
      }
      return Collections.singletonList(n).iterator();
    }).collect();
  }

  @Override
  public String run(SparkContext sc) throws Exception {
    ExecutorService driver = Executors.newSingleThreadExecutor();
    try {
      Future<String> result = driver.submit(() -> {
        sc.setJobGroup("poolpressure", "zip of two shuffles over a held receive pool", true);
        return job(sc);
      });
      try {
        return result.get(DEADLINE_S, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        sc.cancelJobGroup("poolpressure");
        throw new IllegalStateException("the zip of two shuffles did not finish within "
            + DEADLINE_S + " s: reads waiting on a receive pool held by unconsumed blocks");
      }
    } finally {
      driver.shutdownNow();
    }
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    Workload.super.checkCounters(delta, hosts, tally, zeroPinnedCopy, checks);
    Map<String, Long> total = CounterDelta.total(delta);
    long overflows = total.getOrDefault("transport.poolOverflows", 0L);
    checks.check("reads over a held receive pool landed outside it", overflows > 0,
        "transport.poolOverflows " + overflows + ", transport.poolOverflowBytes "
            + total.getOrDefault("transport.poolOverflowBytes", 0L)
            + " (0: the pool was never held, the case was not reached)");
  }
}
