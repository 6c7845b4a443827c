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

  private static ReadResult readOne(TransportChannel ch, int key, int len) {
    ReadResult r = new ReadResult();
    ch.read(List.of(new ReadRequest(0, key, len, r, null)));
    return r;
  }

  @Test
  void sameSecretReads() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      byte[] content = TestFiles.randomBytes(5000, 11);
      RegisteredRegion region = server.register(TestFiles.mapFile(dir, content));
      ReadResult r = readOne(client.connect(server.localAddress()), region.key(), 5000);
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

  /**
   * A peer without the secret sends an auth attempt with reads for a live key pipelined
   * right behind it, in one write: the server reads those frames before it can close the
   * connection, and must refuse each (the connection has no authenticated client id).
   */
  @Test
  void readsPipelinedBehindAFailedAuthAttemptAreRefused() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(1000, 14)));
      int reads = 10;
      long refusedBefore = server.stats().readsRefused.get();
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream frames = new DataOutputStream(bytes);
      // An RpcRequest carrying a made-up auth challenge (the guess of a peer without the secret).
      byte[] challenge = new byte[96];
      new Random(3).nextBytes(challenge);
      frames.writeLong(8 + 1 + 8 + 4 + challenge.length);
      frames.writeByte(3); // RpcRequest
      frames.writeLong(1L);
      frames.writeInt(challenge.length);
      frames.write(challenge);
      for (int i = 0; i < reads; i++) {
        frames.writeLong(8 + 1 + 12);
        frames.writeByte(0); // ChunkFetchRequest
        frames.writeLong(((long) region.key() << 32) | (i * 10L));
        frames.writeInt(10);
      }
      int successes = 0;
      int answers = 0;
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(server.localAddress().host(),
            server.localAddress().port()), 5000);
        s.setSoTimeout(5000);
        s.getOutputStream().write(bytes.toByteArray());
        s.getOutputStream().flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        try {
          while (true) {
            long len = in.readLong();
            byte[] frame = new byte[(int) (len - 8)];
            in.readFully(frame);
            answers++;
            if (frame[0] == 1) { // ChunkFetchSuccess
              successes++;
            }
          }
        } catch (EOFException | SocketException | SocketTimeoutException closed) {
          // the server closes the connection after the failed attempt
        }
      }
      System.out.println("[auth] pipelined behind a failed auth attempt: " + reads
          + " reads sent, " + answers + " answers, " + successes + " served, "
          + (server.stats().readsRefused.get() - refusedBefore) + " refused");
      assertEquals(0, successes);
      assertEquals(reads, server.stats().readsRefused.get() - refusedBefore,
          "every pipelined read reached the server and was refused");
      assertEquals(0, server.stats().readsServed.get());
    }
  }

  @Test
  void unauthenticatedClientIsRefusedEveryRead() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport()) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(100, 13)));
      ReadResult r = readOne(client.connect(server.localAddress()), region.key(), 10);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.future.get(30, TimeUnit.SECONDS));
      // Spark's auth layer refuses the batch as a failed auth attempt, with its reason; it
      // never reaches the regions.
      assertTrue(e.getCause().getMessage().contains("does not have SASL enabled"),
          e.getCause().getMessage());
      assertEquals(0, server.stats().readsRefused.get(), "refused before the region server");
      assertEquals(0, server.stats().readsServed.get());
    }
  }

  /**
   * The right secret presented for another application: Spark's auth engine accepts it
   * (SecurityManager has one secret for any app id), so the region server's own check of
   * the authenticated client id is what refuses the reads.
   */
  @Test
  void sameSecretForAnotherApplicationIsRefusedEveryRead() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client =
             TcpTestSupport.transport(new SparkConf(false), "s3cret", "app-other")) {
      RegisteredRegion region =
          server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(100, 15)));
      TransportChannel ch = client.connect(server.localAddress());
      for (int i = 0; i < 3; i++) {
        ReadResult r = readOne(ch, region.key(), 10 + i);
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> r.future.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("not authenticated for application app-test"),
            e.getCause().getMessage());
      }
      assertEquals(3, server.stats().readsRefused.get(), "the reads reached the server");
      assertEquals(0, server.stats().readsServed.get());
      assertNotEquals(0, server.liveRegions());
    }
  }
}
