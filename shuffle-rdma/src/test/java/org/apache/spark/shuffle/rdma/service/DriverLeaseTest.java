/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node service's lease on an application: its outputs stay while the driver the
 * executors announced accepts connections, and are released (outputs, bytes, descriptors)
 * once it has refused them for spark.shuffle.rdma.service.driverTimeout, or, when it
 * answered before, for the shorter driverGoneTimeout. A real service,
 * real Unix and TCP sockets; the driver is a listening TCP socket, closed to play its end.
 */
class DriverLeaseTest {
  private static final long TIMEOUT_MS = 1000;
  private static final String LEASED = "app-20261206-0100";
  private static final String UNLEASED = "app-20261206-0101";

  @TempDir
  Path dir;

  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();

  /** A service whose refusal rule is off: a refusing driver counts as any failure. */
  private NodeService service(Path socket) throws Exception {
    return service(socket, TIMEOUT_MS, 0);
  }

  private NodeService service(Path socket, long timeoutMs, long goneMs) throws Exception {
    return InProcessService.start(socket, logBytes,
        "--conf", RdmaConf.SERVICE_DRIVER_TIMEOUT().key() + "=" + timeoutMs + "ms",
        "--conf", RdmaConf.SERVICE_DRIVER_GONE_TIMEOUT().key() + "=" + goneMs + "ms",
        "--conf", RdmaConf.SERVICE_DRIVER_PROBE_INTERVAL().key() + "=100ms");
  }

  private String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }

  /** The release is logged just after the outputs are gone. */
  private void awaitLog(String text) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!log().contains(text)) {
      assertTrue(System.nanoTime() < deadline, "no '" + text + "' in\n" + log());
      Thread.sleep(20);
    }
  }

  /** A driver's RPC port: accepts and drops connections until closed. */
  private static ServerSocket driver() throws IOException {
    return driver(0);
  }

  /** The same, on {@code port} (0: any), so a driver can come back where it was. */
  private static ServerSocket driver(int port) throws IOException {
    ServerSocket ss = new ServerSocket();
    ss.setReuseAddress(true);
    ss.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    Thread t = new Thread(() -> {
      while (!ss.isClosed()) {
        try (Socket s = ss.accept()) {
          // accepted and dropped, as a probe expects
        } catch (IOException e) {
          return;
        }
      }
    }, "fake-driver");
    t.setDaemon(true);
    t.start();
    return ss;
  }

  private static HandOverAnswer handOver(ExecutorHandOver h, MapOutputFiles f, long mapId) {
    HandOverAnswer a = h.handOver(1, mapId, f.data.toFile(), f.index.toFile(), null,
        ChecksumAlgorithm.NONE);
    assertNotNull(a, h.lastProblem());
    return a;
  }

  /** Waits until the service holds {@code outputs} outputs; returns the ms it took. */
  private static long awaitOutputs(HandOverClient c, int outputs, long maxMs) throws Exception {
    long start = System.nanoTime();
    while (c.stats().outputs() != outputs) {
      assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(maxMs),
          "the service still holds " + c.stats() + " after " + maxMs + " ms, expected "
              + outputs + " outputs");
      Thread.sleep(20);
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  @Test
  void outputsOutliveAnExecutorButNotTheirDriver() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 2, new int[] {100, 200, 300}, 7);
    ServerSocket driver = driver();
    try (NodeService s = service(socket);
         HandOverClient stats = HandOverClient.connect(socket, 30_000)) {
      ExecutorHandOver executor = new ExecutorHandOver(socket, LEASED, 30_000, "127.0.0.1",
          driver.getLocalPort());
      handOver(executor, f, 2);
      handOver(executor, f, 3);
      assertEquals(TIMEOUT_MS, executor.leaseMs(), executor.leaseProblem());
      executor.close(); // the executor is gone (dynamic allocation): its outputs stay
      try (ExecutorHandOver noDriver = new ExecutorHandOver(socket, UNLEASED, 30_000)) {
        handOver(noDriver, f, 2);
        assertEquals(-1, noDriver.leaseMs());
      }
      ServiceStats before = stats.stats();
      assertEquals(3, before.outputs());
      assertEquals(6, before.openDescriptors());

      // Twice the timeout with the driver up: nothing is released.
      Thread.sleep(2 * TIMEOUT_MS);
      assertEquals(3, stats.stats().outputs(), log());

      // The driver ends: its application's outputs go once the timeout has passed, the other
      // application's (no lease) stay.
      driver.close();
      long took = awaitOutputs(stats, 1, TIMEOUT_MS + 5_000);
      assertTrue(took >= TIMEOUT_MS - 150, "released after " + took + " ms, before the "
          + TIMEOUT_MS + " ms timeout\n" + log());
      ServiceStats after = stats.stats();
      assertEquals(2, after.openDescriptors(), after.toString());
      assertEquals(1, after.applications(), after.toString());
      assertEquals(f.bytes.length + 8L * 4, after.registeredBytes(), after.toString());
      awaitLog("released " + LEASED + " (its driver 127.0.0.1:" + driver.getLocalPort()
          + " has been unreachable for");
      assertTrue(log().contains("is unreachable ("), log());
    }
  }

  /**
   * A driver that answered and then refuses connections has ended: its application goes
   * after the short driver-gone timeout, long before the driver timeout.
   */
  @Test
  void aDriverThatRefusesAfterItAnsweredIsReleasedAfterTheGoneTimeout() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 2, new int[] {100, 200, 300}, 10);
    ServerSocket driver = driver();
    long goneMs = 500;
    try (NodeService s = service(socket, 60_000, goneMs);
         HandOverClient stats = HandOverClient.connect(socket, 30_000)) {
      ExecutorHandOver executor = new ExecutorHandOver(socket, LEASED, 30_000, "127.0.0.1",
          driver.getLocalPort());
      handOver(executor, f, 2);
      executor.close();
      awaitLog("driver-gone-timeout=" + goneMs + "ms");
      Thread.sleep(500); // checked (and answered) at least once: rounds of 100 ms
      assertEquals(1, stats.stats().outputs(), log());
      driver.close(); // the application ended: its RPC port refuses from now on
      long took = awaitOutputs(stats, 0, 10_000);
      assertTrue(took >= goneMs - 150, "released after " + took + " ms, before the "
          + goneMs + " ms driver-gone timeout\n" + log());
      assertEquals(0, stats.stats().openDescriptors());
      awaitLog("released " + LEASED + " (its driver 127.0.0.1:" + driver.getLocalPort()
          + " has refused connections for");
      assertTrue(log().contains("after it had answered: its application ended"), log());
    }
  }

  /**
   * Naming the driver of an application that authenticates takes its secret: a local process
   * without it cannot point the lease at a "driver" of its own and close that to end it.
   */
  @Test
  void onlyAConnectionWithTheSecretNamesAnAuthenticatedApplicationsDriver() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 2, new int[] {10, 20}, 11);
    ServerSocket driver = driver();
    ServerSocket impostor = driver();
    try (NodeService s = service(socket, 60_000, 300);
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver executor = new ExecutorHandOver(socket, LEASED, 30_000, "127.0.0.1",
             driver.getLocalPort(), "secret-of-the-application-91ab", 0);
         HandOverClient other = HandOverClient.connect(socket, 30_000)) {
      handOver(executor, f, 2);
      HandOverAnswer a = other.appDriver(LEASED, "127.0.0.1", impostor.getLocalPort());
      assertTrue(!a.isRefused(), a.toString()); // taken, not applied: nothing to learn here
      Thread.sleep(500); // the impostor's port would have answered a check by now
      impostor.close();
      Thread.sleep(1500); // five times the driver-gone timeout
      assertEquals(1, stats.stats().outputs(), "the lease follows the real driver\n" + log());
      assertTrue(!log().contains("driver at 127.0.0.1:" + impostor.getLocalPort()), log());
    } finally {
      driver.close();
    }
  }

  @Test
  void anExecutorThatLivesOnRenewsTheLeaseWithItsNextOutput() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 2, new int[] {10, 20}, 8);
    ServerSocket driver = driver();
    int port = driver.getLocalPort();
    driver.close(); // unreachable from the start (from this service, say)
    // The refusal rule on: a driver that never answered waits for the whole timeout.
    try (NodeService s = service(socket, TIMEOUT_MS, 200);
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver executor = new ExecutorHandOver(socket, LEASED, 30_000,
             "127.0.0.1", port)) {
      handOver(executor, f, 2);
      awaitOutputs(stats, 0, TIMEOUT_MS + 5_000);
      // Same connection, lease gone: the next output is leased again, and ends the same way.
      handOver(executor, f, 3);
      assertEquals(1, stats.stats().outputs());
      long took = awaitOutputs(stats, 0, TIMEOUT_MS + 5_000);
      assertTrue(took >= TIMEOUT_MS - 150, "released after " + took + " ms\n" + log());
      assertEquals(0, stats.stats().openDescriptors());
    }
  }

  /** A link that flaps for less than the timeout costs nothing: the lease starts over. */
  @Test
  void aDriverBackWithinTheTimeoutKeepsItsOutputs() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 2, new int[] {10, 20}, 9);
    ServerSocket driver = driver();
    int port = driver.getLocalPort();
    try (NodeService s = service(socket);
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver executor = new ExecutorHandOver(socket, LEASED, 30_000,
             "127.0.0.1", port)) {
      handOver(executor, f, 2);
      for (int flap = 0; flap < 2; flap++) {
        driver.close();
        awaitLog("is unreachable (");
        Thread.sleep(TIMEOUT_MS / 3);
        driver = driver(port);
        awaitLog("answers again; its outputs stay");
        logBytes.reset();
      }
      Thread.sleep(2 * TIMEOUT_MS);
      assertEquals(1, stats.stats().outputs(), "two outages shorter than the timeout, "
          + "each started over: nothing released\n" + log());
    } finally {
      driver.close();
    }
  }

  @Test
  void aDriverWithoutHostOrPortIsRefusedAndTheConnectionGoesOn() throws Exception {
    Path socket = dir.resolve("s.sock");
    try (NodeService s = service(socket);
         HandOverClient c = HandOverClient.connect(socket, 30_000)) {
      HandOverAnswer a = c.call(HandOverRequest.appDriver(LEASED, "", 0).encode());
      assertTrue(a.isRefused(), a.toString());
      assertTrue(a.refusal().contains("needs a host and a port in [1, 65535]"), a.refusal());
      assertEquals(TIMEOUT_MS, c.appDriver(LEASED, "127.0.0.1", 7078).leaseMs());
    }
  }

  @Test
  void aProbeIntervalLongerThanTheTimeoutFailsAtStartNamingBothKeys() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new DriverLeases(1000, 2000, new ServiceLog(System.out)));
    assertTrue(e.getMessage().contains(RdmaConf.SERVICE_DRIVER_PROBE_INTERVAL().key())
        && e.getMessage().contains(RdmaConf.SERVICE_DRIVER_TIMEOUT().key()), e.getMessage());
  }
}
