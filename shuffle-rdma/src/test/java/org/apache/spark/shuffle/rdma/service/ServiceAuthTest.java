/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTestSupport;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two applications with spark.authenticate on one node service: each is served on a
 * transport of its own that authenticates readers with that application's secret. A reader
 * of one reads its own outputs and nothing of the other's, neither at the other's address
 * (its handshake fails) nor with the other's keys and addresses at its own (the keys are not
 * there); executors take part only with the application's secret, and an application that
 * started without authentication cannot be joined by one that has it.
 */
class ServiceAuthTest {
  private static final String A = "app-20261206-0201";
  private static final String B = "app-20261206-0202";
  private static final String SECRET_A = "secret-of-a-3f9c1d";
  private static final String SECRET_B = "secret-of-b-77e2a0";

  @TempDir
  Path dir;

  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();

  private NodeService service(Path socket) throws Exception {
    return InProcessService.start(socket, logBytes);
  }

  private static ExecutorHandOver executor(Path socket, String app, String secret) {
    return new ExecutorHandOver(socket, app, 30_000, null, 0, secret, 0);
  }

  private static HandOverAnswer handOver(ExecutorHandOver h, MapOutputFiles f, long map) {
    return h.handOver(1, map, f.data.toFile(), f.index.toFile(), null, ChecksumAlgorithm.NONE);
  }

  private static byte[] read(TcpTransport reader, HandOverAnswer a, int length) throws Exception {
    MapOutputDescriptor d = a.descriptor();
    return ReadResult.read(reader.connect(a.address()), d.dataAddress(0), d.dataKey(0), length);
  }

  @Test
  void eachApplicationReadsItsOwnAndNothingOfTheOthers() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles fa = new MapOutputFiles(java.nio.file.Files.createDirectories(
        dir.resolve("a")), 1, 1, new int[] {64, 64}, 1);
    MapOutputFiles fb = new MapOutputFiles(java.nio.file.Files.createDirectories(
        dir.resolve("b")), 1, 1, new int[] {64, 64}, 2);
    try (NodeService s = service(socket);
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver ea = executor(socket, A, SECRET_A);
         ExecutorHandOver eb = executor(socket, B, SECRET_B);
         TcpTransport readerA = TcpTestSupport.transport(new SparkConf(false), SECRET_A, A);
         TcpTransport readerB = TcpTestSupport.transport(new SparkConf(false), SECRET_B, B)) {
      HandOverAnswer a = handOver(ea, fa, 1);
      HandOverAnswer b = handOver(eb, fb, 1);
      assertNotNull(a, ea.lastProblem());
      assertNotNull(b, eb.lastProblem());
      // A transport of its own each, not the service's shared one.
      assertNotEquals(a.address(), b.address());
      assertNotEquals(s.sharedAddress(), a.address());

      // Each reads its own.
      assertArrayEquals(fa.partition(0), read(readerA, a, 64));
      assertArrayEquals(fb.partition(0), read(readerB, b, 64));
      // A's reader at B's address: its handshake proves A's secret, not B's.
      Exception atB = assertThrows(Exception.class, () -> read(readerA, b, 64));
      assertTrue(String.valueOf(atB.getMessage()).toLowerCase().contains("auth")
          || atB.getCause() != null, String.valueOf(atB));
      // A's reader at its own address with B's keys (copied from B's descriptor): not there.
      MapOutputDescriptor db = b.descriptor();
      Exception copied = assertThrows(Exception.class, () -> ReadResult.read(
          readerA.connect(a.address()), db.dataAddress(0), db.dataKey(0), 64));
      assertTrue(String.valueOf(copied.getMessage()).contains("key")
          || String.valueOf(copied.getMessage()).contains("refused"), String.valueOf(copied));
      // A's reader still reads its own after both refusals.
      assertArrayEquals(fa.partition(1), ReadResult.read(readerA.connect(a.address()),
          a.descriptor().dataAddress(0) + 64, a.descriptor().dataKey(0), 64));

      // Releasing A closes its transport: nothing of A is left, B goes on.
      try (ExecutorHandOver driverA = executor(socket, A, SECRET_A)) {
        assertEquals(1, driverA.releaseApp().releasedOutputs());
      }
      ServiceStats after = stats.stats();
      assertEquals(1, after.outputs(), after.toString());
      assertEquals(1, after.applications(), after.toString());
      assertThrows(Exception.class, () -> read(readerA, a, 64));
      assertArrayEquals(fb.partition(0), read(readerB, b, 64));
    }
  }

  @Test
  void onlyConnectionsWithTheSecretTakePartInAnApplication() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 1, new int[] {32, 32}, 3);
    try (NodeService s = service(socket);
         ExecutorHandOver ea = executor(socket, A, SECRET_A);
         ExecutorHandOver wrong = executor(socket, A, "not-the-secret");
         HandOverClient plain = HandOverClient.connect(socket, 30_000)) {
      assertNotNull(handOver(ea, f, 1), ea.lastProblem());
      // Another executor of A with another secret: nothing handed over, the reason kept.
      assertNull(handOver(wrong, f, 2));
      assertTrue(wrong.lastProblem().contains("the secret differs from the one application "
          + A + " proved first"), wrong.lastProblem());
      // A connection that proved nothing can neither release A's outputs...
      HandOverAnswer r = plain.releaseApp(A);
      assertTrue(r.isRefused() && r.refusal().contains("did not present its secret"),
          r.toString());
      r = plain.releaseShuffle(A, 1);
      assertTrue(r.isRefused(), r.toString());
      assertEquals(1, plain.stats().outputs(), "nothing of A was released");
      // ...nor hand one over under A's name.
      try (ExecutorHandOver noSecret = new ExecutorHandOver(socket, A, 30_000)) {
        assertNull(handOver(noSecret, f, 3));
        assertTrue(noSecret.lastProblem().contains("did not present its secret"),
            noSecret.lastProblem());
      }
      assertEquals(1, plain.stats().outputs());
    }
  }

  @Test
  void anApplicationStartedWithoutAuthenticationCannotBeJoinedWithIt() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles f = new MapOutputFiles(dir, 1, 1, new int[] {32, 32}, 4);
    try (NodeService s = service(socket);
         ExecutorHandOver open = new ExecutorHandOver(socket, A, 30_000);
         ExecutorHandOver withSecret = executor(socket, A, SECRET_A);
         HandOverClient c = HandOverClient.connect(socket, 30_000)) {
      HandOverAnswer a = handOver(open, f, 1);
      assertNotNull(a, open.lastProblem());
      assertEquals(s.sharedAddress(), a.address(), "no authentication: the shared transport");
      assertNull(handOver(withSecret, f, 2));
      assertTrue(withSecret.lastProblem().contains("handed over outputs without "
          + "authentication"), withSecret.lastProblem());
      // The wire checks of the proof itself.
      HandOverAnswer empty = c.call(HandOverRequest.appAuth(B, "", 0).encode());
      assertTrue(empty.isRefused() && empty.refusal().contains("must not be empty"),
          empty.toString());
      HandOverAnswer bits = c.call(HandOverRequest.appAuth(B, "x", 4).encode());
      assertTrue(bits.isRefused() && bits.refusal().contains("bits 1 and 2 only"),
          bits.toString());
      assertTrue(!HandOverRequest.appAuth(B, SECRET_B, 0).toString().contains(SECRET_B),
          "the secret is never printed");
    }
  }
}
