/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The executor's side of the hand-over against a real service: configured by
 * spark.shuffle.rdma.service.socket, checksums sent only when they fit, refusals and an
 * unreachable service turned into "register it yourself" (null and a reason), and a
 * restarted service reached again on the next call.
 */
class ExecutorHandOverTest {
  private static final String APP = "app-20261206-0002";

  @TempDir
  Path dir;

  private NodeService service(Path socket) throws Exception {
    return InProcessService.start(socket);
  }

  @Test
  void theSocketKeyConfiguresItAndIsChecked() {
    assertNull(ExecutorHandOver.fromConf(new RdmaShuffleConf(new SparkConf(false)), APP,
        null));
    SparkConf conf = new SparkConf(false).set(RdmaConf.SERVICE_SOCKET().key(),
        " /run/shuffle-rdma/s.sock ");
    try (ExecutorHandOver h = ExecutorHandOver.fromConf(new RdmaShuffleConf(conf), APP, null)) {
      assertTrue(h != null);
    }
    IllegalArgumentException relative = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(new SparkConf(false).set(RdmaConf.SERVICE_SOCKET().key(),
            "run/s.sock")));
    assertTrue(relative.getMessage().contains("spark.shuffle.rdma.service.socket"),
        relative.getMessage());
    assertTrue(relative.getMessage().contains("absolute path of at most 107 bytes"),
        relative.getMessage());
  }

  @Test
  void handsOverFallsBackOnRefusalAndReconnects() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = dir.resolve("s.sock");
    MapOutputFiles out = new MapOutputFiles(dir, 1, 2, new int[] {10, 20, 30}, 9);
    try (ExecutorHandOver h = new ExecutorHandOver(socket, APP, 30_000)) {
      // No service yet: the executor keeps the output.
      assertNull(h.handOver(1, 2, out.data.toFile(), out.index.toFile(), null,
          ChecksumAlgorithm.NONE));
      assertTrue(h.lastProblem().contains("is the node service running"), h.lastProblem());
      try (NodeService s = service(socket)) {
        HandOverAnswer a = h.handOver(1, 2, out.data.toFile(), out.index.toFile(),
            out.checksums.toFile(), ChecksumAlgorithm.CRC32);
        assertTrue(a != null, h.lastProblem());
        assertEquals(ChecksumAlgorithm.CRC32, a.descriptor().checksumAlgorithm());
        assertEquals(3, a.descriptor().numPartitions());
        try (TcpTransport reader = TestFiles.loopbackTcp()) {
          assertArrayEquals(out.partition(2), ReadResult.read(reader.connect(a.address()),
              a.descriptor().dataAddress(0) + 30, a.descriptor().dataKey(0), 30));
        }
        // A checksum file of another length is not sent: the descriptor says NONE.
        HandOverAnswer b = h.handOver(1, 3, out.data.toFile(), out.index.toFile(),
            out.data.toFile(), ChecksumAlgorithm.CRC32);
        assertEquals(ChecksumAlgorithm.NONE, b.descriptor().checksumAlgorithm());
        // Refused (handed over twice): null, the reason kept.
        assertNull(h.handOver(1, 2, out.data.toFile(), out.index.toFile(), null,
            ChecksumAlgorithm.NONE));
        assertTrue(h.lastProblem().contains("was handed over already"), h.lastProblem());
      }
      // The service stopped: the next call fails over to the executor...
      assertNull(h.handOver(1, 4, out.data.toFile(), out.index.toFile(), null,
          ChecksumAlgorithm.NONE));
      // ...and a restarted service is reached again.
      try (NodeService s = service(socket)) {
        assertTrue(h.handOver(1, 5, out.data.toFile(), out.index.toFile(), null,
            ChecksumAlgorithm.NONE) != null, h.lastProblem());
      }
      assertEquals(3, h.handedOver());
      assertEquals(3, h.notHandedOver());
    }
  }
}
