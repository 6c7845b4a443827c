/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tcp server's limits on peers that have not authenticated (spark.authenticate on, no
 * secret): connections per remote address, and the frame size they may announce. Hostile
 * sockets come from 127.0.0.2, the well-behaved client from 127.0.0.1, and keeps reading.
 */
class TcpPreAuthLimitsTest {
  private static final int MAX_CONNECTIONS = 8;
  private static final int MAX_FRAME = 4096;

  @TempDir
  File dir;

  private TcpTransport server;
  private TcpTransport client;
  private RegisteredRegion region;
  private byte[] content;
  private final List<Socket> sockets = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    SparkConf limits = new SparkConf(false)
        .set("spark.shuffle.rdma.tcp.maxConnectionsPerAddress", String.valueOf(MAX_CONNECTIONS))
        .set("spark.shuffle.rdma.tcp.maxRequestFrameSize", String.valueOf(MAX_FRAME));
    server = TcpTestSupport.transport(limits, "s3cret");
    client = TcpTestSupport.transport(new SparkConf(false), "s3cret");
    content = TestFiles.randomBytes(10_000, 31);
    region = server.register(TestFiles.mapFile(dir, content));
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    client.close();
    server.close();
  }

  private void assertServerStillServes() throws Exception {
    ReadResult r = new ReadResult();
    client.connect(server.localAddress())
        .read(List.of(new ReadRequest(region.address() + 100, region.key(), 900, r, null)));
    assertArrayEquals(Arrays.copyOfRange(content, 100, 1000), r.future.get(30, TimeUnit.SECONDS));
  }

  /** A raw connection from 127.0.0.2 (another "host" on loopback). */
  private Socket fromOtherHost() throws IOException {
    Socket s = new Socket();
    sockets.add(s);
    s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
    s.connect(new InetSocketAddress(server.localAddress().host(), server.localAddress().port()),
        5000);
    return s;
  }

  private void awaitOpenFrom(String host, int n) throws Exception {
    InetAddress a = InetAddress.getByName(host);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.guard().openFrom(a) != n) {
      assertTrue(System.nanoTime() < deadline, "open from " + host + ": "
          + server.guard().openFrom(a) + ", expected " + n);
      Thread.sleep(10);
    }
  }

  @Test
  void connectionsPerAddressAreBounded() throws Exception {
    int extra = 12;
    List<Socket> kept = new ArrayList<>();
    for (int i = 0; i < MAX_CONNECTIONS; i++) {
      kept.add(fromOtherHost());
    }
    awaitOpenFrom("127.0.0.2", MAX_CONNECTIONS);
    List<Socket> over = new ArrayList<>();
    for (int i = 0; i < extra; i++) {
      over.add(fromOtherHost());
    }
    for (Socket s : over) {
      assertTrue(TcpTestSupport.closedByServer(s, 5000), "a connection over the limit must be closed");
    }
    for (Socket s : kept) {
      assertTrue(!TcpTestSupport.closedByServer(s, 50), "connections within the limit stay open");
    }
    assertEquals(extra, server.guard().connectionsRefused.get());
    // Another address is not affected by 127.0.0.2's connections.
    assertServerStillServes();
    // Closing one frees its slot.
    kept.get(0).close();
    awaitOpenFrom("127.0.0.2", MAX_CONNECTIONS - 1);
    Socket again = fromOtherHost();
    assertTrue(!TcpTestSupport.closedByServer(again, 300), "a freed slot is usable again");
    assertEquals(extra, server.guard().connectionsRefused.get());
  }

  @Test
  void oversizedFrameBeforeAuthenticationClosesTheConnection() throws Exception {
    // At the limit: a SASL message framed in exactly HandshakeFrames.MAX_FRAME bytes is read
    // and answered (refused by the auth handler), the connection is not cut by the guard.
    try (Socket s = fromOtherHost()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      byte[] id = "app-test".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int body = HandshakeFrames.MAX_FRAME - (8 + 1 + 8 + 4);
      java.nio.ByteBuffer sasl = java.nio.ByteBuffer.allocate(body);
      sasl.put((byte) 0xEA).putInt(id.length).put(id).putInt(body - 1 - 4 - id.length - 4);
      TcpAuthenticationTest.rpc(out, 1, sasl.array());
      out.flush();
      s.setSoTimeout(10_000);
      DataInputStream in = new DataInputStream(s.getInputStream());
      long len = in.readLong();
      assertTrue(len > 9, "an answer frame");
      assertEquals(0, server.guard().framesRefused.get());
    }
    // One byte over: closed on the header, before the body is sent or buffered.
    try (Socket s = fromOtherHost()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeLong(HandshakeFrames.MAX_FRAME + 1);
      out.writeByte(3);
      out.flush();
      assertTrue(TcpTestSupport.closedByServer(s, 5000), "an oversized frame must close the connection");
    }
    // A huge announced frame (2 GiB): same, nothing is buffered waiting for it.
    try (Socket s = fromOtherHost()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeLong(Integer.MAX_VALUE);
      out.write(new byte[1000]);
      out.flush();
      assertTrue(TcpTestSupport.closedByServer(s, 5000), "an oversized frame must close the connection");
    }
    assertEquals(2, server.guard().framesRefused.get());
    assertEquals(0, server.stats().readsServed.get());
    assertServerStillServes();
  }
}
