/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's cap on registered bytes (--max-registered-bytes) and each application's share
 * of it (--app-share), against a real service: a hand-over past either is refused naming
 * which, the executor keeps the output (null and the reason), nothing of a refused output
 * stays in the service, and a release makes room again.
 */
class NodeCapTest {
  /** Each output: 200 data bytes and a 24-byte index (two partitions). */
  private static final long OUTPUT = 224;

  @TempDir
  Path dir;

  private NodeService service(Path socket, String cap, String share) throws Exception {
    return InProcessService.start(socket, "--max-registered-bytes", cap, "--app-share", share);
  }

  private static boolean handOver(ExecutorHandOver h, MapOutputFiles f, int shuffle, long map) {
    return h.handOver(shuffle, map, f.data.toFile(), f.index.toFile(), null,
        ChecksumAlgorithm.NONE) != null;
  }

  @Test
  void refusesPastTheApplicationsShareAndPastTheNodesCap() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 1, new int[] {100, 100}, 3);
    // Node: 1000 bytes; each application: 50%, 500 bytes, two outputs.
    try (NodeService s = service(socket, "1000", "50");
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver a = new ExecutorHandOver(socket, "app-a", 30_000);
         ExecutorHandOver b = new ExecutorHandOver(socket, "app-b", 30_000);
         ExecutorHandOver c = new ExecutorHandOver(socket, "app-c", 30_000)) {
      assertTrue(handOver(a, f, 1, 1) && handOver(a, f, 1, 2), a.lastProblem());
      assertTrue(!handOver(a, f, 1, 3));
      assertTrue(a.lastProblem().contains("would pass its share, 500 bytes (--app-share"),
          a.lastProblem());
      assertTrue(handOver(b, f, 1, 1) && handOver(b, f, 1, 2), b.lastProblem());
      // 4 x 224 = 896 held: the next 224 would pass the node's 1000.
      assertTrue(!handOver(c, f, 1, 1));
      assertTrue(c.lastProblem().contains("this node service holds 896 bytes and this output "
          + "(224 bytes) would pass its --max-registered-bytes 1000"), c.lastProblem());
      ServiceStats full = stats.stats();
      assertEquals(4, full.outputs(), full.toString());
      assertEquals(4 * OUTPUT, full.registeredBytes(), full.toString());
      assertEquals(8, full.openDescriptors(), "a refused output holds no descriptor");
      assertEquals(2, full.refusals(), full.toString());

      // Releasing app-a's shuffle gives its bytes back: app-c fits now.
      assertEquals(2, stats.releaseShuffle("app-a", 1).releasedOutputs());
      assertTrue(handOver(c, f, 1, 1), c.lastProblem());
      assertEquals(3 * OUTPUT, stats.stats().registeredBytes());
      assertEquals(1, a.notHandedOver());
      assertEquals(1, c.notHandedOver());
    }
  }

  @Test
  void withoutACapEverythingIsTakenAndAShareNeedsACap() throws Exception {
    NodeBudget none = new NodeBudget(0, 100);
    assertNull(none.reserve(Long.MAX_VALUE / 2, Long.MAX_VALUE / 4));
    assertEquals(0, none.appMax());
    assertEquals(330, new NodeBudget(1000, 33).appMax());
    assertEquals(346, new NodeBudget(1050, 33).appMax(), "1050 * 33 / 100");
    assertEquals((3L << 40) / 4 * 3, new NodeBudget(3L << 40, 75).appMax(), "no overflow");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ServiceArgs.parse(new String[] {"--socket", "/s", "--app-share", "50"}));
    assertTrue(e.getMessage().contains("set a cap with --max-registered-bytes"),
        e.getMessage());
    assertEquals(64L << 30, ServiceArgs.parse(new String[] {"--socket", "/s",
        "--max-registered-bytes", "64g"}).maxRegisteredBytes);
    e = assertThrows(IllegalArgumentException.class, () -> ServiceArgs.parse(
        new String[] {"--socket", "/s", "--max-registered-bytes", "lots"}));
    assertTrue(e.getMessage().contains("--max-registered-bytes takes a size"), e.getMessage());
  }
}
