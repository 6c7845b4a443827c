/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A key scan: 10^6 random probes (key, address, length) in batches of 64 against a server
 * with 16 live regions. Nothing is found, every refusal reads the same (no liveness, no
 * size), and each connection is closed once its refusals look like a scan (so the scanner
 * must reconnect every ~1,000 probes; the closes are logged at the 1st, 2nd, 4th ...).
 */
class TcpKeyScanTest {
  @TempDir
  File dir;

  @Test
  void aMillionRandomProbesFindNothingAndLearnNothing() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), null)) {
      Set<Integer> keys = new HashSet<>();
      for (int i = 0; i < 16; i++) {
        RegisteredRegion r = server.register(TestFiles.mapFile(dir,
            TestFiles.randomBytes(4096 * (i + 1), 70 + i)));
        keys.add(r.key());
      }
      Random rnd = new Random(0x5ca9);
      int probes = 1_000_000;
      int sent = 0;
      int connections = 0;
      Set<String> texts = new HashSet<>();
      long batchId = 0;
      while (sent < probes) {
        connections++;
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(server.localAddress().host(),
              server.localAddress().port()), 5000);
          s.setSoTimeout(10_000);
          DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(
              s.getOutputStream()));
          DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(
              s.getInputStream()));
          try {
            while (sent < probes) {
              int n = Math.min(ReadBatch.MAX_READS, probes - sent);
              ByteBuffer b = ByteBuffer.allocate(13 + 16 * n);
              b.put((byte) 'B').putLong(++batchId % ReadBatch.MAX_BATCH_ID + 1).putInt(n);
              for (int i = 0; i < n; i++) {
                b.putInt(rnd.nextInt()).putLong(rnd.nextLong() & Long.MAX_VALUE)
                    .putInt(1 + rnd.nextInt(4096));
              }
              TcpAuthenticationTest.rpc(out, batchId, b.array());
              out.flush();
              long len = in.readLong();
              byte[] frame = new byte[(int) (len - 8)];
              in.readFully(frame);
              ByteBuffer f = ByteBuffer.wrap(frame);
              assertEquals(1, f.get(), "a batch answer");
              f.position(1 + 8 + 4);
              assertEquals(n, f.getInt());
              for (int i = 0; i < n; i++) {
                assertEquals(ReadBatch.REFUSED, f.getInt(), "a probe was served");
                byte[] why = new byte[f.getShort()];
                f.get(why);
                texts.add(new String(why, StandardCharsets.UTF_8));
              }
              sent += n;
            }
          } catch (java.io.EOFException | java.net.SocketException closedAsAScan) {
            // the server closed this connection: reconnect and go on
          }
        }
      }
      System.out.println("[key scan] " + sent + " random probes over " + connections
          + " connections (the server closed " + server.regionServer().connectionsClosed.get()
          + " as scans): " + server.stats().readsServed.get() + " served, refusal texts "
          + texts);
      assertEquals(0, server.stats().readsServed.get(), "a probe found live bytes");
      assertEquals(Set.of(Refusal.NO_SUCH_BYTES), texts, "refusals tell nothing apart");
      assertTrue(server.regionServer().connectionsClosed.get() >= probes
          / (RegionServer.MAX_REFUSALS + ReadBatch.MAX_READS) - 1,
          "scanning connections are closed: " + server.regionServer().connectionsClosed.get());
      assertTrue(keys.size() == 16);
    }
  }
}
