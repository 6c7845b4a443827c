/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RELEASE_OUTPUT: one handed-over output whose task attempt ended without success after its
 * commit (Spark never tracks it) is released alone: its key is refused from then on, its
 * descriptors are closed, its bytes go back to the node's cap, and the other outputs of its
 * shuffle are still served.
 */
class ReleaseOutputTest {
  private static final String APP = "app-20261206-0301";

  @TempDir
  Path dir;

  @Test
  void releasesOneOutputAndKeepsTheRestOfItsShuffle() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 1, new int[] {100, 124}, 5); // 224 + 24
    // Room for two outputs of 248 bytes, not three.
    try (NodeService s = InProcessService.start(socket, "--max-registered-bytes", "600");
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver executor = new ExecutorHandOver(socket, APP, 30_000);
         TcpTransport reader = TestFiles.loopbackTcp()) {
      HandOverAnswer kept = handOver(executor, f, 1);
      HandOverAnswer loser = handOver(executor, f, 2);
      assertTrue(executor.handOver(1, 3, f.data.toFile(), f.index.toFile(), null,
          ChecksumAlgorithm.NONE) == null, "the cap holds two");

      HandOverAnswer r = executor.releaseOutput(1, 2);
      assertEquals(1, r.releasedOutputs(), r.toString());
      assertEquals(248, r.releasedBytes(), r.toString());
      ServiceStats after = stats.stats();
      assertEquals(1, after.outputs(), after.toString());
      assertEquals(2, after.openDescriptors(), after.toString());
      assertEquals(248, after.registeredBytes(), after.toString());
      // The released output's key is gone; the other output of the shuffle is served.
      assertThrows(Exception.class, () -> ReadResult.read(reader.connect(loser.address()),
          loser.descriptor().dataAddress(0), loser.descriptor().dataKey(0), 100));
      assertArrayEquals(f.partition(1), ReadResult.read(reader.connect(kept.address()),
          kept.descriptor().dataAddress(0) + 100, kept.descriptor().dataKey(0), 124));
      // Its bytes went back to the cap: a third output fits now.
      assertNotNull(handOver(executor, f, 3));
      // Releasing it again, or one never handed over, releases nothing.
      assertEquals(0, executor.releaseOutput(1, 2).releasedOutputs());
      assertEquals(0, executor.releaseOutput(9, 9).releasedOutputs());
      HandOverAnswer negative = stats.call(HandOverRequest.releaseOutput(APP, 1, -1).encode());
      assertTrue(negative.isRefused() && negative.refusal().contains("neither may be negative"),
          negative.toString());
    }
  }

  private static HandOverAnswer handOver(ExecutorHandOver h, MapOutputFiles f, long map) {
    HandOverAnswer a = h.handOver(1, map, f.data.toFile(), f.index.toFile(), null,
        ChecksumAlgorithm.NONE);
    assertNotNull(a, h.lastProblem());
    return a;
  }
}
