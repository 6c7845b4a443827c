/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.File;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.Channel;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peers that make the tcp server work and never take the result: requests pipelined on a
 * connection that never reads its answers (before and after authentication, with a 4 KiB
 * receive buffer). The server's direct memory stays bounded, the connection is paused and
 * then closed, a well-behaved client keeps reading byte-exact, and deregistering the region
 * those answers reference completes within seconds.
 */
class TcpPressureTest {
  @TempDir
  File dir;

  /** Direct memory of Netty's pooled allocators in this JVM (Spark shares them). */
  private static long pooledDirect(Channel ch) {
    ByteBufAllocator a = ch.alloc();
    return a instanceof ByteBufAllocatorMetricProvider
        ? ((ByteBufAllocatorMetricProvider) a).metric().usedDirectMemory() : 0;
  }

  @Test
  void answersNobodyReadsAreBoundedAndDoNotHoldRegions() throws Exception {
    // The server gives up on a connection that takes none of its answers after readTimeout.
    SparkConf serverConf = new SparkConf(false).set(RdmaConf.READ_TIMEOUT().key(), "2s");
    SparkConf hostileConf = new SparkConf(false).set("spark.shuffle.io.receiveBuffer", "4096");
    try (TcpTransport server = TcpTestSupport.transport(serverConf, "s3cret");
         TcpTransport hostile = TcpTestSupport.transport(hostileConf, "s3cret");
         TcpTransport good = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      byte[] content = TestFiles.randomBytes(1 << 20, 51);
      RegisteredRegion region = server.register(TestFiles.mapFile(dir, content));
      byte[] other = TestFiles.randomBytes(100_000, 52);
      RegisteredRegion otherRegion = server.register(TestFiles.mapFile(dir, other));

      // Authenticated, then never reads: 64 reads of 4 KiB per batch, as fast as it can send.
      TcpChannel ch = (TcpChannel) hostile.connect(server.localAddress());
      Channel raw = ch.nettyChannel();
      raw.config().setAutoRead(false);
      List<ReadRequest> reads = new ArrayList<>();
      for (int i = 0; i < ReadBatch.MAX_READS; i++) {
        reads.add(new ReadRequest(region.address() + i * 4096L, region.key(), 4096,
            new ReadResult(), null));
      }
      long peakDirect = 0;
      long batches = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      // Until the server pauses this connection (and the socket buffers are full).
      while (server.flow().pauses.get() == 0 && System.nanoTime() < deadline) {
        assertTrue(raw.isActive(), "the hostile connection closed before the server paused");
        if (raw.isWritable()) {
          ByteBuf frame = ReadBatch.encodeRequestFrame(raw.alloc(), 1 + (batches % 1000),
              reads);
          raw.writeAndFlush(frame);
          batches++;
        } else {
          Thread.sleep(1);
        }
        peakDirect = Math.max(peakDirect, pooledDirect(raw));
      }
      assertTrue(server.flow().pauses.get() > 0, "the server paused the connection after "
          + batches + " batches");
      // Meanwhile a well-behaved client reads byte-exact.
      for (int i = 0; i < 20; i++) {
        ReadResult r = new ReadResult();
        good.connect(server.localAddress()).read(List.of(new ReadRequest(
            otherRegion.address() + i * 1000L, otherRegion.key(), 5000, r, null)));
        assertArrayEquals(Arrays.copyOfRange(other, i * 1000, i * 1000 + 5000),
            r.future.get(30, TimeUnit.SECONDS));
        peakDirect = Math.max(peakDirect, pooledDirect(raw));
      }
      // Deregistering the region the queued answers reference completes: the stalled
      // connection is closed after readTimeout with nothing written.
      long t0 = System.nanoTime();
      server.deregister(region).get(20, TimeUnit.SECONDS);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      System.out.println("[pressure] authenticated peer that never reads: " + batches
          + " batches (" + (batches * 64 * 4096 >> 20) + " MiB asked) sent before the pause; "
          + "pooled direct memory peak " + (peakDirect >> 10) + " KiB; pauses "
          + server.flow().pauses.get() + ", stalled connections closed "
          + server.flow().stallsClosed.get() + "; deregistration took " + ms + " ms");
      assertEquals(1, server.flow().stallsClosed.get());
      assertTrue(peakDirect < (16L << 20), "direct memory " + peakDirect);
      assertTrue(ms < 10_000, "deregistration took " + ms + " ms");
      assertEquals(1, server.liveRegions());
    }
  }

  /**
   * Before authentication nothing but handshake messages is read, and a second frame is not
   * taken in before the first is answered: 2,000 pipelined frames from a peer that never
   * reads end at the second frame, with the connection closed.
   */
  @Test
  void pipelinedFramesBeforeAuthenticationEndAtTheSecond() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      server.register(TestFiles.mapFile(dir, TestFiles.randomBytes(4096, 53)));
      try (Socket s = new Socket()) {
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress(server.localAddress().host(),
            server.localAddress().port()), 5000);
        DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(
            s.getOutputStream(), 1 << 16));
        int sent = 0;
        try {
          for (; sent < 2000; sent++) {
            TcpAuthenticationTest.rpc(out, sent, TcpAuthenticationTest.saslHello("app-test"));
          }
          out.flush();
        } catch (java.io.IOException closed) {
          // the server closed while we were still sending: fine
        }
        s.setSoTimeout(10_000);
        boolean closed;
        try {
          // At most SASL's challenge, then the close (or a reset, for the unread rest).
          while (s.getInputStream().read() >= 0) {
            // drain
          }
          closed = true;
        } catch (java.io.IOException reset) {
          closed = true;
        }
        ConnectionGuard g = server.guard();
        long ended = TcpTestSupport.await(
            () -> g.framesRefused.get() + g.handshakesFailed.get(), 1);
        System.out.println("[pressure] peer before authentication: " + sent
            + " pipelined SASL hellos written; frames refused "
            + server.guard().framesRefused.get() + ", handshakes failed "
            + server.guard().handshakesFailed.get() + ", open connections "
            + server.guard().open());
        assertTrue(closed);
        assertEquals(1, ended, "the connection ended at its second frame");
      }
    }
  }
}
