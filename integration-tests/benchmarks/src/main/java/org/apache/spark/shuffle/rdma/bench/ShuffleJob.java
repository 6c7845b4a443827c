/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The shuffle-heavy job: random records (8-byte key, a random value of {@code valueBytes},
 * {@link #VALUE_BYTES} by default; large values make the transport's work dominate)
 * generated in the map tasks, then
 * <ol>
 *   <li>repartition (full shuffle of the data),</li>
 *   <li>groupByKey of the repartitioned records on a coarser key (full shuffle, no map-side
 *       combine),</li>
 *   <li>reduceByKey of (key, hash of value) (map-side combine, small shuffle),</li>
 *   <li>sortByKey of the repartitioned records (sample job plus a full range shuffle).</li>
 * </ol>
 * Each reading job ends in an order-independent digest, so the same seed gives the same
 * result under any shuffle manager; the sort's global order is checked as well.
 */
public final class ShuffleJob {
  public static final int VALUE_BYTES = 100;
  /**
   * Serialized size of one record in the full shuffles (Kryo, lz4) beyond its value, roughly:
   * 118 bytes measured for 100-byte values (random values do not compress).
   */
  public static final int RECORD_OVERHEAD_BYTES = 18;

  private ShuffleJob() {}

  /**
   * Records for about {@code totalShuffleBytes} written over the three full shuffles, at
   * least 10,000.
   */
  public static long recordsFor(double totalShuffleBytes, int valueBytes) {
    return Math.max(10_000L,
        (long) (totalShuffleBytes / 3.0 / (valueBytes + RECORD_OVERHEAD_BYTES)));
  }

  /** Runs the job and returns its digest (equal under every manager for the same input). */
  public static String run(JavaSparkContext jsc, long records, int valueBytes, int maps,
      int reduces, long seed) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < maps; i++) ids.add(i);
    final long perMap = records / maps;
    final long extra = records % maps;
    JavaPairRDD<Long, byte[]> gen = jsc.parallelize(ids, maps).mapPartitionsToPair(it -> {
      int m = it.next();
      long n = perMap + (m < extra ? 1 : 0);
      return new RecordIterator(new SplittableRandom(seed * 7919 + m), n, valueBytes);
    });
    JavaPairRDD<Long, byte[]> rep = gen.repartition(reduces);

    final long groups = Math.max(1, records / 64);
    long[] grouped = rep.mapToPair(t -> new Tuple2<>(Math.floorMod(t._1, groups), t._2))
        .groupByKey(reduces)
        .map(kv -> {
          long n = 0, h = 0;
          for (byte[] v : kv._2) { n++; h += Arrays.hashCode(v); }
          return new long[] {1, n, h * 31 + kv._1};
        })
        .reduce(ShuffleJob::add);

    final long keys = Math.max(1, records / 4);
    long[] reduced = rep.mapToPair(t -> new Tuple2<>(Math.floorMod(t._1, keys),
            (long) Arrays.hashCode(t._2)))
        .reduceByKey(Long::sum, reduces)
        .map(kv -> new long[] {1, kv._2 * 17 + kv._1})
        .reduce(ShuffleJob::add);

    // Per sorted partition: {index, count, first key, last key, in order (1/0), digest}.
    List<long[]> parts = rep.sortByKey(true, reduces)
        .mapPartitionsWithIndex((idx, it) -> {
          long n = 0, first = 0, last = 0, ordered = 1, h = 0;
          while (it.hasNext()) {
            Tuple2<Long, byte[]> t = it.next();
            if (n == 0) first = t._1;
            else if (t._1 < last) ordered = 0;
            last = t._1;
            n++;
            h += Arrays.hashCode(t._2) * 31L + t._1;
          }
          List<long[]> one = new ArrayList<>();
          one.add(new long[] {idx, n, first, last, ordered, h});
          return one.iterator();
        }, true)
        .collect();
    long sortedN = 0, sortedH = 0;
    boolean ordered = true;
    long prevLast = Long.MIN_VALUE;
    boolean any = false;
    List<long[]> sortedParts = new ArrayList<>(parts);
    sortedParts.sort((a, b) -> Long.compare(a[0], b[0]));
    for (long[] p : sortedParts) {
      sortedN += p[1];
      sortedH += p[5];
      if (p[1] == 0) continue;
      if (p[4] != 1 || (any && p[2] < prevLast)) ordered = false;
      prevLast = p[3];
      any = true;
    }
    return String.format("records=%d groupBy[groups=%d values=%d digest=%d] "
            + "reduceBy[keys=%d digest=%d] sort[records=%d ordered=%s digest=%d]",
        records, grouped[0], grouped[1], grouped[2], reduced[0], reduced[1], sortedN, ordered,
        sortedH);
  }

  static long[] add(long[] a, long[] b) {
    long[] r = new long[a.length];
    for (int i = 0; i < a.length; i++) r[i] = a[i] + b[i];
    return r;
  }

  /** Lazily generated random records. */
  static final class RecordIterator implements Iterator<Tuple2<Long, byte[]>> {
    private final SplittableRandom rnd;
    private final int valueBytes;
    private long left;

    RecordIterator(SplittableRandom rnd, long n, int valueBytes) {
      this.rnd = rnd;
      this.left = n;
      this.valueBytes = valueBytes;
    }

    @Override
    public boolean hasNext() {
      return left > 0;
    }

    @Override
    public Tuple2<Long, byte[]> next() {
      if (left <= 0) throw new NoSuchElementException();
      left--;
      byte[] v = new byte[valueBytes];
      rnd.nextBytes(v);
      return new Tuple2<>(rnd.nextLong(), v);
    }
  }
}
