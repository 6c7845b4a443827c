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
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTestSupport;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layout the service has on verbs (a transport per application, none shared), run on tcp
 * where no RDMA device exists: applications without authentication each get a transport of
 * their own at their own address; a key of one is not there on the other's; releasing an
 * application's last shuffle closes its transport and the next hand-over opens a new one.
 * On verbs that transport is a protection domain, so the same holds in the NIC.
 */
class PerApplicationTransportTest {
  private static final String A = "app-20261206-0301";
  private static final String B = "app-20261206-0302";

  @TempDir
  Path dir;

  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();

  private NodeService service(Path socket) throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    ServiceArgs args = ServiceArgs.parse(new String[] {"--socket", socket.toString(),
        "--host", "127.0.0.1"});
    return new NodeService(args, new ServiceLog(new PrintStream(logBytes, true,
        StandardCharsets.UTF_8)), ServiceTransports.tcpPerApplication(args, "127.0.0.1"));
  }

  private static ExecutorHandOver executor(Path socket, String app) {
    return new ExecutorHandOver(socket, app, 30_000, null, 0, null, 0);
  }

  private static HandOverAnswer handOver(ExecutorHandOver h, MapOutputFiles f, int shuffle,
      long map) {
    return h.handOver(shuffle, map, f.data.toFile(), f.index.toFile(), null,
        ChecksumAlgorithm.NONE);
  }

  private static byte[] read(TcpTransport reader, HandOverAnswer a, long offset, int length)
      throws Exception {
    MapOutputDescriptor d = a.descriptor();
    return ReadResult.read(reader.connect(a.address()), d.dataAddress(0) + offset,
        d.dataKey(0), length);
  }

  @Test
  void eachApplicationIsServedOnItsOwnTransportWhichClosesWithIt() throws Exception {
    Path socket = dir.resolve("s.sock");
    MapOutputFiles fa = new MapOutputFiles(Files.createDirectories(dir.resolve("a")), 1, 1,
        new int[] {64, 64}, 1);
    MapOutputFiles fb = new MapOutputFiles(Files.createDirectories(dir.resolve("b")), 1, 1,
        new int[] {64, 64}, 2);
    MapOutputFiles fa2 = new MapOutputFiles(Files.createDirectories(dir.resolve("a2")), 2, 1,
        new int[] {32}, 3);
    try (NodeService s = service(socket);
         HandOverClient stats = HandOverClient.connect(socket, 30_000);
         ExecutorHandOver ea = executor(socket, A);
         ExecutorHandOver eb = executor(socket, B);
         TcpTransport readerA = TcpTestSupport.transport(new SparkConf(false), null, A);
         TcpTransport readerB = TcpTestSupport.transport(new SparkConf(false), null, B)) {
      String log = logBytes.toString(StandardCharsets.UTF_8);
      assertTrue(log.contains(" transport=tcp address=per-application "), log);
      assertNull(s.sharedAddress(), "nothing shared");

      HandOverAnswer a = handOver(ea, fa, 1, 1);
      HandOverAnswer b = handOver(eb, fb, 1, 1);
      assertNotNull(a, ea.lastProblem());
      assertNotNull(b, eb.lastProblem());
      assertNotEquals(a.address(), b.address(), "a transport of its own each");
      log = logBytes.toString(StandardCharsets.UTF_8);
      assertTrue(log.contains("application " + A + ": its outputs are served on tcp "
          + a.address() + ", a transport of its own"), log);

      assertArrayEquals(fa.partition(0), read(readerA, a, 0, 64));
      assertArrayEquals(fb.partition(1), read(readerB, b, 64, 64));
      // B's key and address copied into a read at A's transport: not there.
      MapOutputDescriptor db = b.descriptor();
      Exception copied = assertThrows(Exception.class, () -> ReadResult.read(
          readerA.connect(a.address()), db.dataAddress(0), db.dataKey(0), 64));
      assertTrue(String.valueOf(copied.getMessage()).contains("key")
          || String.valueOf(copied.getMessage()).contains("refused"), String.valueOf(copied));
      assertArrayEquals(fa.partition(1), read(readerA, a, 64, 64));

      // A's only shuffle released: its transport closes with it, B goes on.
      assertEquals(1, ea.releaseShuffle(1).releasedOutputs());
      ServiceStats after = stats.stats();
      assertEquals(1, after.applications(), after.toString());
      assertThrows(Exception.class, () -> read(readerA, a, 0, 64));
      assertThrows(java.net.ConnectException.class, () -> new java.net.Socket(
          a.address().host(), a.address().port()).close(), "A's transport is closed");
      assertArrayEquals(fb.partition(0), read(readerB, b, 0, 64));
      // A's next output opens a new transport.
      HandOverAnswer a2 = handOver(ea, fa2, 2, 1);
      assertNotNull(a2, ea.lastProblem());
      assertNotEquals(a.address(), a2.address());
      assertArrayEquals(fa2.partition(0), read(readerA, a2, 0, 32));
    }
    assertTrue(logBytes.toString(StandardCharsets.UTF_8).contains("shuffle-rdma-service "
        + "stopped"));
  }
}
