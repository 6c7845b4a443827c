/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import org.apache.spark.shuffle.rdma.metadata.ClusterTotals;
import org.junit.jupiter.api.Test;

/**
 * The driver's sums while executors come and go: counters never fall when Spark removes an
 * executor (its last report seen is kept, once), gauges drop its share, and removed executors
 * cost nothing once no poll may still report them.
 */
class ClusterTotalsTest {
  // reader.remoteBlocks and transport.bytesRead are counters, registry.bytes a gauge,
  // transport.readDepth a setting (RdmaMetrics).
  private static Map<String, Long> stats(long blocks, long bytesRead, long registered) {
    return Map.of("reader.remoteBlocks", blocks, "transport.bytesRead", bytesRead,
        "registry.bytes", registered, "transport.readDepth", 16L);
  }

  private static void poll(ClusterTotals t, Map<String, Map<String, Long>> replies) {
    long p = t.pollStarted();
    replies.forEach(t::report);
    t.pollEnded(p);
  }

  @Test
  void removedExecutorsCountersStayAndItsGaugesGo() {
    ClusterTotals t = RdmaMetricsSource.newClusterTotals();
    poll(t, Map.of("1", stats(10, 1000, 4096), "2", stats(5, 500, 8192)));
    assertEquals(Map.of("executors", 2L, "reader.remoteBlocks", 15L,
        "transport.bytesRead", 1500L, "registry.bytes", 12288L), t.totals());

    t.removed("1");
    assertEquals(Map.of("executors", 1L, "reader.remoteBlocks", 15L,
        "transport.bytesRead", 1500L, "registry.bytes", 8192L), t.totals());

    poll(t, Map.of("2", stats(7, 700, 8192), "3", stats(1, 100, 0)));
    assertEquals(Map.of("executors", 2L, "reader.remoteBlocks", 18L,
        "transport.bytesRead", 1800L, "registry.bytes", 8192L), t.totals());

    t.removed("2");
    t.removed("3");
    assertEquals(Map.of("executors", 0L, "reader.remoteBlocks", 18L,
        "transport.bytesRead", 1800L), t.totals());
  }

  /** A reply that left before the removal and arrives after it counts, once. */
  @Test
  void lateReportAfterRemovalIsNotCountedTwice() {
    ClusterTotals t = RdmaMetricsSource.newClusterTotals();
    poll(t, Map.of("1", stats(10, 1000, 4096), "2", stats(5, 500, 0)));

    long p = t.pollStarted(); // lists 1 and 2, asks them
    t.report("2", stats(5, 500, 0));
    t.removed("1");           // Spark removes 1 while its reply is on the way
    t.report("1", stats(12, 1200, 4096)); // newer than the report retained at removal
    t.pollEnded(p);
    assertEquals(Map.of("executors", 1L, "reader.remoteBlocks", 17L,
        "transport.bytesRead", 1700L, "registry.bytes", 0L), t.totals());

    // The same reply again (another poll that was running) adds nothing.
    long q = t.pollStarted();
    t.removed("2");
    t.report("2", stats(5, 500, 0));
    t.report("2", stats(5, 500, 0));
    t.pollEnded(q);
    assertEquals(Map.of("executors", 0L, "reader.remoteBlocks", 17L,
        "transport.bytesRead", 1700L), t.totals());
  }

  /** Removed before its first report was seen, and that report arrives late: it counts. */
  @Test
  void firstReportArrivingAfterRemovalCounts() {
    ClusterTotals t = RdmaMetricsSource.newClusterTotals();
    long p = t.pollStarted();
    t.removed("1");
    t.report("1", stats(3, 300, 4096));
    t.pollEnded(p);
    assertEquals(Map.of("executors", 0L, "reader.remoteBlocks", 3L,
        "transport.bytesRead", 300L), t.totals());
  }

  /** Two overlapping polls whose older reply lands last: a counter does not go back. */
  @Test
  void anOlderReplyDoesNotLowerACounter() {
    ClusterTotals t = RdmaMetricsSource.newClusterTotals();
    poll(t, Map.of("1", stats(10, 1000, 4096)));
    poll(t, Map.of("1", stats(8, 800, 2048)));
    assertEquals(Map.of("executors", 1L, "reader.remoteBlocks", 10L,
        "transport.bytesRead", 1000L, "registry.bytes", 2048L), t.totals());
  }

  /** The retained total is one number per counter: removed executors are not held. */
  @Test
  void thousandsOfRemovedExecutorsHoldNothing() {
    ClusterTotals t = RdmaMetricsSource.newClusterTotals();
    for (int i = 0; i < 5000; i++) {
      String id = Integer.toString(i);
      poll(t, Map.of(id, stats(1, 10, 4096)));
      long p = t.pollStarted();
      t.removed(id);  // also while a poll runs
      t.report(id, stats(2, 20, 4096));
      t.pollEnded(p);
    }
    assertEquals(0, t.executorsHeld());
    assertEquals(Map.of("executors", 0L, "reader.remoteBlocks", 10000L,
        "transport.bytesRead", 100000L), t.totals());
  }
}
