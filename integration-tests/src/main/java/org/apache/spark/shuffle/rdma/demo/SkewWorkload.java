/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.Map;
import org.apache.spark.SparkContext;

/**
 * {@link SkewDemo}'s job: each of {@link #MAPS} map tasks sends {@link #SKEW_MB} MiB of
 * incompressible records to reduce partition 0 and 256 KiB to each other partition. The
 * two-host run sets {@code receivePoolSize=4m} (reads of at most 1 MiB), {@code regionSize=4m}
 * and {@code spark.network.maxRemoteBlockSizeFetchToMem=5m}: the skewed block (partition 0
 * comes first in its map output file) is larger than the receive pool, crosses a region
 * boundary and streams into Spark's download file. Clean-run counters, plus: more data READs
 * than blocks (pieces) and at least one block to disk.
 */
final class SkewWorkload implements Workload {
  static final int SKEW_MB = 6;
  static final int REDUCERS = 4;
  static final int MAPS = 2;

  @Override
  public String name() {
    return "skew";
  }

  @Override
  public String run(SparkContext sc) {
    return render(SkewDemo.job(sc, SKEW_MB, REDUCERS, MAPS));
  }

  /** One "partition:records:crcSum" line per reduce partition. */
  static String render(scala.collection.Seq<String> lines) {
    StringBuilder b = new StringBuilder();
    scala.collection.Iterator<String> it = lines.iterator();
    while (it.hasNext()) {
      b.append(it.next()).append('\n');
    }
    return b.toString();
  }

  @Override
  public String describe(String result) {
    return result.strip().replace('\n', ' ');
  }

  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    Workload.super.checkCounters(delta, hosts, tally, zeroPinnedCopy, checks);
    Map<String, Long> total = CounterDelta.total(delta);
    long blocks = total.getOrDefault("reader.remoteBlocks", 0L);
    long data = total.getOrDefault("reader.dataReads", 0L);
    long toDisk = total.getOrDefault("reader.blocksToDisk", 0L);
    checks.check("large blocks read in pieces", blocks > 0 && data > blocks,
        "data READs " + data + " for " + blocks + " remote blocks (pieces of at most a quarter"
            + " of the 4 MiB receive pool)");
    checks.check("blocks over maxRemoteBlockSizeFetchToMem to disk", toDisk >= 1,
        "reader.blocksToDisk " + toDisk);
  }
}
