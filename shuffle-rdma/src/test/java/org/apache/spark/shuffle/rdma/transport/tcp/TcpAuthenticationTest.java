/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * spark.authenticate: Spark's auth engine guards the tcp transport. A wrong secret, no
 * secret, or the right secret presented for another application gets no byte served, and
 * each of these tests sends real reads for a live key before checking that.
 */
class TcpAuthenticationTest {
  @TempDir
  File dir;

  private static ReadResult readOne(TransportChannel ch, RegisteredRegion region, int len) {
    ReadResult r = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), len, r, null)));
    return r;
  }

  @Test
  void sameSecretReads() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      byte[] content = TestFiles.randomBytes(5000, 11);
      RegisteredRegion region = server.register(TestFiles.mapFile(dir, content));
      ReadResult r = readOne(client.connect(server.localAddress()), region, 5000);
      assertArrayEquals(content, r.future.get(30, TimeUnit.SECONDS));
      assertEquals(1, server.stats().readsServed.get());
    }
  }

  @Test
  void wrongSecretGetsNoConnection() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport(new SparkConf(false), "guess")) {
      server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(100, 12)));
      assertThrows(Exception.class, () -> client.connect(server.localAddress()));
      assertEquals(0, server.stats().readsServed.get());
    }
  }

  /** Frames a body as network-common's RpcRequest. */
  static void rpc(DataOutputStream out, long requestId, byte[] body) throws java.io.IOException {
    out.writeLong(8 + 1 + 8 + 4 + body.length);
    out.writeByte(3); // RpcRequest
    out.writeLong(requestId);
    out.writeInt(body.length);
    out.write(body);
  }

  /** Spark's SaslMessage: tag 0xEA, the app id, then the SASL token (empty: the hello). */
  static byte[] saslHello(String appId) {
    byte[] id = appId.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return java.nio.ByteBuffer.allocate(1 + 4 + id.length + 4)
        .put((byte) 0xEA).putInt(id.length).put(id).putInt(0).array();
  }

  /** Spark's AuthMessage: tag 0xFB, the app id, a salt and a ciphertext (made up here). */
  static byte[] authEngineHello(String appId, long seed) {
    byte[] id = appId.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] salt = new byte[16];
    byte[] cipher = new byte[64];
    Random rnd = new Random(seed);
    rnd.nextBytes(salt);
    rnd.nextBytes(cipher);
    return java.nio.ByteBuffer.allocate(1 + 4 + id.length + 4 + 16 + 4 + 64)
        .put((byte) 0xFB).putInt(id.length).put(id).putInt(16).put(salt).putInt(64).put(cipher)
        .array();
  }

  /** Reads of a live region, each as a single read (ChunkFetchRequest) and in one batch. */
  static void readsOf(DataOutputStream out, RegisteredRegion region, int reads)
      throws java.io.IOException {
    java.nio.ByteBuffer batch = java.nio.ByteBuffer.allocate(13 + 16 * reads);
    batch.put((byte) 'B').putLong(77).putInt(reads);
    for (int i = 0; i < reads; i++) {
      out.writeLong(8 + 1 + 12);
      out.writeByte(0); // ChunkFetchRequest: stream id (key, address), chunk index (length)
      out.writeLong(((long) region.key() << 32) | (i * 10L));
      out.writeInt(10);
      batch.putInt(region.key()).putLong(region.address() + i * 10L).putInt(10);
    }
    rpc(out, 2, batch.array());
  }

  /** Sends {@code bytes} in one write, reads every answer until the server closes. */
  static int[] answersUntilClosed(TcpTransport server, byte[] bytes) throws Exception {
    int successes = 0;
    int answers = 0;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(server.localAddress().host(),
          server.localAddress().port()), 5000);
      s.setSoTimeout(5000);
      s.getOutputStream().write(bytes);
      s.getOutputStream().flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      try {
        while (true) {
          long len = in.readLong();
          byte[] frame = new byte[(int) (len - 8)];
          in.readFully(frame);
          answers++;
          if (frame[0] == 1) { // ChunkFetchSuccess: bytes of a region
            successes++;
          }
        }
      } catch (EOFException | SocketException closed) {
        // the server closed the connection
      }
    }
    return new int[] {answers, successes};
  }

  /**
   * A SASL hello naming the application (which made SASL record the app id as the client
   * id, before any proof), then reads of a live key as single reads and as a batch, all in
   * one write: the hello is answered with SASL's challenge, the first read closes the
   * connection, nothing is served. On the old server the single reads were served: the
   * region server trusted the client id.
   */
  @Test
  void readsBehindASaslHelloAreNeverServed() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(1000, 14)));
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream frames = new DataOutputStream(bytes);
      rpc(frames, 1, saslHello("app-test"));
      readsOf(frames, region, 10);
      int[] got = answersUntilClosed(server, bytes.toByteArray());
      System.out.println("[auth] SASL hello + 10 single reads + a batch of 10: " + got[0]
          + " answers, " + got[1] + " served; frames refused "
          + server.guard().framesRefused.get());
      assertEquals(0, got[1], "no read served");
      assertTrue(got[0] <= 1, "at most SASL's challenge is answered: " + got[0]);
      assertEquals(1, server.guard().framesRefused.get(), "the first read closed the connection");
      assertEquals(0, server.stats().readsServed.get());
      assertEquals(0, server.stats().bytesServed.get());
    }
  }

  /**
   * The same behind an auth engine hello with no proof (spark.network.crypto.enabled): the
   * handshake fails, the connection is closed, nothing is served.
   */
  @Test
  void readsBehindAnAuthEngineHelloWithoutProofAreNeverServed() throws Exception {
    SparkConf crypto = new SparkConf(false).set("spark.network.crypto.enabled", "true");
    try (TcpTransport server = TcpTestSupport.transport(crypto, "s3cret")) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(1000, 14)));
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream frames = new DataOutputStream(bytes);
      rpc(frames, 1, authEngineHello("app-test", 3));
      readsOf(frames, region, 10);
      int[] got = answersUntilClosed(server, bytes.toByteArray());
      TcpTestSupport.await(server.guard().handshakesFailed::get, 1);
      System.out.println("[auth] auth engine hello without proof + reads: " + got[0]
          + " answers, " + got[1] + " served; handshakes failed "
          + server.guard().handshakesFailed.get());
      assertEquals(0, got[1], "no read served");
      assertEquals(1, server.guard().handshakesFailed.get(), "the handshake failed");
      assertEquals(0, server.stats().readsServed.get());
      // A SASL hello is not accepted on an auth engine server either (no fallback).
      bytes.reset();
      rpc(frames, 1, saslHello("app-test"));
      got = answersUntilClosed(server, bytes.toByteArray());
      assertEquals(0, got[0], "a SASL hello gets no answer: SASL fallback is off");
      assertEquals(1, server.guard().framesRefused.get());
    }
  }

  /**
   * A client without the secret sends its batch as its first frame: not a handshake message,
   * so the connection is closed before Spark's decoders see it; no answer, nothing served.
   */
  @Test
  void unauthenticatedClientIsRefusedEveryRead() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport()) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(100, 13)));
      ReadResult r = readOne(client.connect(server.localAddress()), region, 10);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.future.get(30, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains("closed")
          || e.getCause().getMessage().contains("lost"), e.getCause().getMessage());
      assertEquals(1, server.guard().framesRefused.get(), "closed on its first frame");
      assertEquals(0, server.stats().readsServed.get());
    }
  }

  /**
   * The right secret presented for another application: Spark's auth handshake accepts it
   * (SecurityManager has one secret for any app id), so the region server's own check of
   * the authenticated client id refuses the batch and closes the connection.
   */
  @Test
  void sameSecretForAnotherApplicationIsRefusedEveryRead() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(100, 15)));
      for (int i = 0; i < 3; i++) {
        try (TcpTransport client =
                 TcpTestSupport.transport(new SparkConf(false), "s3cret", "app-other")) {
          ReadResult r = readOne(client.connect(server.localAddress()), region, 10 + i);
          ExecutionException e = assertThrows(ExecutionException.class,
              () -> r.future.get(30, TimeUnit.SECONDS));
          assertTrue(e.getCause().getMessage().contains(
              "the connection is not authenticated for this application"),
              e.getCause().getMessage());
        }
      }
      assertEquals(3, server.stats().readsRefused.get(), "the batches reached the server");
      assertEquals(3, server.regionServer().connectionsClosed.get());
      assertEquals(0, server.stats().readsServed.get());
      assertNotEquals(0, server.liveRegions());
    }
  }
}
