/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.HandOverProtocol;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input to a real service (in this JVM, real socket and files): each request is refused
 * with a line naming the problem, no descriptor stays open, and the service keeps serving.
 */
class ServiceRefusalTest {
  private static final String APP = "app-1";

  @TempDir
  Path dir;

  /** Descriptors of this JVM open on the test's files or /dev/null (not its jars, sockets). */
  private long openFds() throws IOException {
    long n = 0;
    try (java.util.stream.Stream<Path> s = Files.list(Paths.get("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) s::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          n += target.startsWith(dir.toString()) && !target.endsWith(".sock")
              || target.equals("/dev/null") ? 1 : 0;
        } catch (IOException e) {
          // closed while listed
        }
      }
    }
    return n;
  }

  /** The number behind a JDK descriptor (java.io is opened to tests, as Spark needs). */
  private static int rawFd(java.io.FileDescriptor fd) throws Exception {
    java.lang.reflect.Field f = java.io.FileDescriptor.class.getDeclaredField("fd");
    f.setAccessible(true);
    return f.getInt(fd);
  }

  private static void refused(HandOverAnswer a, String needle) {
    assertTrue(a.isRefused(), "expected a refusal naming '" + needle + "', got " + a);
    assertTrue(a.refusal().contains(needle), a.refusal());
    assertFalse(a.refusal().contains("\n"), "one line");
  }

  @Test
  void badRequestsAreRefusedNamingTheProblemAndTheServiceServesOn() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = dir.resolve("s.sock");
    ByteArrayOutputStream logged = new ByteArrayOutputStream();
    ServiceArgs args = ServiceArgs.parse(new String[] {"--socket", socket.toString(),
        "--transport", "tcp", "--host", "127.0.0.1"});
    MapOutputFiles good = new MapOutputFiles(dir, 0, 1, new int[] {100, 200}, 5);
    Path badIndex = TestFiles.writeIndex(dir.resolve("bad.index").toFile(), 0, 100, 299)
        .toPath();
    Path longIndex = TestFiles.writeIndex(dir.resolve("long.index").toFile(), 0, 100, 300, 300)
        .toPath();
    Path backwards = TestFiles.writeIndex(dir.resolve("back.index").toFile(), 0, 200, 100)
        .toPath();
    try (NodeService service = new NodeService(args, new ServiceLog(new PrintStream(logged,
            true, StandardCharsets.UTF_8)));
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      long before = openFds();
      int data = Fds.openRead(good.data);
      int index = Fds.openRead(good.index);
      int devNull = Fds.openRead(Paths.get("/dev/null"));
      byte[] valid = HandOverRequest.handOver(APP, 0, 1, 2, ChecksumAlgorithm.NONE).encode();

      refused(client.call("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII)),
          "not a shuffle-rdma hand-over message");
      byte[] v2 = valid.clone();
      v2[5] = 2;
      refused(client.call(v2, data, index), "protocol version 2");
      refused(client.call(java.util.Arrays.copyOf(valid, 20), data, index),
          "message truncated");
      byte[] trailing = java.util.Arrays.copyOf(valid, valid.length + 1);
      refused(client.call(trailing, data, index), "after its last field");
      refused(client.call(valid, data), "came with 1 descriptors, expected 2");
      refused(client.call(valid, data, index, index, index), "more than 3 file descriptors");
      refused(client.call(HandOverRequest.handOver("app 1/..", 0, 1, 2,
          ChecksumAlgorithm.NONE).encode(), data, index), "is not 1 to 255 of");
      // A write-only descriptor does not prove its sender may read the file.
      Path other = Files.createTempFile("write-only", ".data");
      try (java.io.FileOutputStream writeOnly = new java.io.FileOutputStream(other.toFile())) {
        writeOnly.write(new byte[300]);
        refused(client.call(valid, rawFd(writeOnly.getFD()), index),
            "data descriptor is not open for reading (O_PATH or write-only");
      } finally {
        Files.delete(other);
      }
      refused(client.call(valid, devNull, index), "data descriptor is a character device");
      refused(client.call(valid, data, devNull), "index descriptor is a character device");
      refused(client.handOver(APP, 0, 1, 2, good.data, badIndex, null, ChecksumAlgorithm.NONE),
          "inconsistent with the data file: its last partition ends at 299 but the data file "
              + "has 300 bytes");
      refused(client.handOver(APP, 0, 1, 2, good.data, longIndex, null, ChecksumAlgorithm.NONE),
          "the index file has 32 bytes; an output of 2 partitions has 24");
      refused(client.handOver(APP, 0, 1, 2, good.data, backwards, null, ChecksumAlgorithm.NONE),
          "partition 1 ends at 100, before it starts (200)");
      refused(client.handOver(APP, 0, 1, 2, good.data, good.index, good.data,
          ChecksumAlgorithm.CRC32), "the checksum file has 300 bytes");
      assertEquals(before + 3, openFds(), "every refused descriptor closed (3 are the test's)");

      HandOverAnswer ok = client.call(valid, data, index);
      assertFalse(ok.isRefused(), String.valueOf(ok.refusal()));
      refused(client.call(valid, data, index), "was handed over already");
      assertEquals(before + 5, openFds(), "the service holds the accepted output's two");
      try (TcpTransport reader = TestFiles.loopbackTcp()) {
        byte[] read = ReadResult.read(reader.connect(ok.address()),
            ok.descriptor().dataAddress(0) + 100, ok.descriptor().dataKey(0), 200);
        assertArrayEquals(good.partition(1), read);
      }
      assertEquals(15, client.stats().refusals());
      assertEquals(2, client.releaseApp(APP).releasedOutputs() + 1);
      Fds.close(data);
      Fds.close(index);
      Fds.close(devNull);
      assertEquals(before, openFds());
    }
    String log = logged.toString(StandardCharsets.UTF_8);
    assertTrue(log.contains("refused: malformed request: not a shuffle-rdma hand-over"), log);
    assertTrue(log.contains("shuffle-rdma-service stopped"), log);
    assertFalse(Files.exists(socket), "the socket file is removed at stop");
  }

  @Test
  void argumentsAndTransportAreCheckedAtStart() throws Exception {
    IllegalArgumentException noSocket = assertThrows(IllegalArgumentException.class,
        () -> ServiceArgs.parse(new String[] {"--transport", "tcp"}));
    assertTrue(noSocket.getMessage().contains("--socket PATH is required"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ServiceArgs.parse(
        new String[] {"--socket", "/x", "--transport", "rdma"})).getMessage()
        .contains("--transport is tcp, verbs or auto, not 'rdma'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ServiceArgs.parse(
        new String[] {"--socket", "/x", "--conf", "spark.executor.memory=1g"})).getMessage()
        .contains("--conf takes spark.shuffle.rdma.KEY=VALUE"));
    // The protocol's own check of a descriptor count the request declares wrongly.
    byte[] m = HandOverRequest.handOver(APP, 0, 1, 2, ChecksumAlgorithm.NONE).encode();
    m[m.length - 1] = 3;
    assertTrue(assertThrows(IOException.class, () -> HandOverRequest.decode(m, 3)).getMessage()
        .contains("declares 3 descriptors"));
    assertEquals(HandOverProtocol.MAGIC, ByteBuffer.wrap(m).getInt());
    String[] devices = new java.io.File("/sys/class/infiniband").list();
    Assumptions.assumeTrue(devices == null || devices.length == 0,
        "an RDMA device is present: the service's verbs start is tested in the Soft-RoCE run");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = NodeService.run(new String[] {"--socket", dir.resolve("s").toString(),
        "--transport", "verbs"}, System.out, new PrintStream(err, true, StandardCharsets.UTF_8));
    // No RDMA device on the test's host: verbs fails at start naming why and the fix, and
    // auto serves on tcp and says why.
    assertEquals(1, rc);
    String why = err.toString(StandardCharsets.UTF_8);
    assertTrue(why.contains("--transport verbs: RDMA verbs cannot start here: "), why);
    assertTrue(why.contains("or use --transport tcp"), why);
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    ByteArrayOutputStream autoLog = new ByteArrayOutputStream();
    try (NodeService auto = new NodeService(ServiceArgs.parse(new String[] {"--socket",
        dir.resolve("auto.sock").toString(), "--transport", "auto", "--host", "127.0.0.1"}),
        new ServiceLog(new PrintStream(autoLog, true, StandardCharsets.UTF_8)))) {
      String log = autoLog.toString(StandardCharsets.UTF_8);
      assertTrue(log.contains("transport auto: tcp, because verbs cannot start here: "), log);
      assertTrue(log.contains(" transport=tcp address=127.0.0.1:"), log);
      assertNotNull(auto.sharedAddress());
    }
  }
}
