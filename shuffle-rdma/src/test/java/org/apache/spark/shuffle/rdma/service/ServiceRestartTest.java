/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node service started again from its state: it binds the port readers were told unless
 * --port names another, and each restored application's lease starts fresh on the driver
 * it had named (a driver gone meanwhile ends it, as without a restart).
 */
class ServiceRestartTest {
  private static final String APP = "app-restart";

  @TempDir
  Path work;

  @Test
  void bindsThePortReadersWereToldUnlessAnotherIsGiven() throws Exception {
    Path socket = work.resolve("s.sock");
    MapOutputFiles out = new MapOutputFiles(work, 0, 1, new int[] {64}, 9);
    int told;
    try (NodeService s = InProcessService.start(socket);
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertFalse(client.handOver(APP, 0, 1, 1, out.data, out.index, null,
          ChecksumAlgorithm.NONE).isRefused());
      told = s.sharedAddress().port();
    }
    try (NodeService s = InProcessService.start(socket)) {
      assertEquals(told, s.sharedAddress().port());
    }
    int other;
    try (ServerSocket free = new ServerSocket(0)) {
      other = free.getLocalPort();
    }
    try (NodeService s = InProcessService.start(socket, "--port", Integer.toString(other));
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertEquals(other, s.sharedAddress().port(), "--port wins");
      assertEquals(1, client.stats().outputs(), "the output is restored at that port");
    }
  }

  @Test
  void aRestoredApplicationsLeaseStartsFreshOnItsDriver() throws Exception {
    Path socket = work.resolve("s.sock");
    MapOutputFiles out = new MapOutputFiles(work, 0, 1, new int[] {64}, 10);
    int driverPort;
    try (ServerSocket driver = new ServerSocket(0, 50,
            java.net.InetAddress.getLoopbackAddress())) {
      driverPort = driver.getLocalPort();
      try (NodeService s = InProcessService.start(socket);
          HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        assertFalse(client.appDriver(APP, "127.0.0.1", driverPort).isRefused());
        assertFalse(client.handOver(APP, 0, 1, 1, out.data, out.index, null,
            ChecksumAlgorithm.NONE).isRefused());
      }
    } // the driver is gone while the service is down
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    try (NodeService s = InProcessService.start(socket, log,
            "--conf", RdmaConf.SERVICE_DRIVER_TIMEOUT().key() + "=1s",
            "--conf", RdmaConf.SERVICE_DRIVER_GONE_TIMEOUT().key() + "=0",
            "--conf", RdmaConf.SERVICE_DRIVER_PROBE_INTERVAL().key() + "=100ms");
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      String text = log.toString(StandardCharsets.UTF_8);
      assertTrue(text.contains("driver at 127.0.0.1:" + driverPort + " (from the state), its "
          + "lease starts now"), text);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (client.stats().outputs() > 0) {
        assertTrue(System.nanoTime() < deadline, "the lease did not end within 10 s:\n"
            + log.toString(StandardCharsets.UTF_8));
        Thread.sleep(50);
      }
    }
    // Released by the lease: gone from the state as well.
    try (NodeService s = InProcessService.start(socket);
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertEquals(0, client.stats().outputs());
    }
  }
}
