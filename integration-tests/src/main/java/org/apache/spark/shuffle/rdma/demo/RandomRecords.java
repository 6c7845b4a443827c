/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * A shuffle of incompressible records whose size is known in advance: {@code maps} map tasks,
 * each writing {@code recordsPerMap} records of {@code recordBytes} random bytes (seeded per
 * map, so the sort shuffle's reference on the host sees the same bytes), keys round-robin
 * over {@code reducers} partitions; records are generated as they are written.
 */
final class RandomRecords {
  private RandomRecords() {}

  static JavaPairRDD<Integer, byte[]> shuffled(JavaSparkContext jsc, int maps,
      int recordsPerMap, int recordBytes, int reducers, long seed) {
    List<Integer> ids = new ArrayList<>();
    for (int m = 0; m < maps; m++) {
      ids.add(m);
    }
    return jsc.parallelize(ids, maps).flatMapToPair(m -> new Iterator<Tuple2<Integer, byte[]>>() {
      private final Random rnd = new Random(seed + m);
      private int i;

      @Override
      public boolean hasNext() {
        return i < recordsPerMap;
      }

      @Override
      public Tuple2<Integer, byte[]> next() {
        byte[] v = new byte[recordBytes];
        rnd.nextBytes(v);
        return new Tuple2<>(i++ % reducers, v);
      }
    }).partitionBy(new HashPartitioner(reducers));
  }
}
