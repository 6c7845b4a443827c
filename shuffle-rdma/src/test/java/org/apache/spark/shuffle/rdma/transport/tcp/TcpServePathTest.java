/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.apache.spark.shuffle.rdma.testing.TestFiles.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tcp server's write path (ServeEncoder): answers written as gathered slices of the
 * mapping and, for reads of at least spark.shuffle.rdma.tcp.sendfileThreshold from a
 * file-backed region, with sendfile from the descriptor opened at registration. Real
 * sockets on loopback; every answer is compared byte for byte.
 */
class TcpServePathTest {
  @TempDir
  File dir;

  private TcpTransport server;
  private TcpTransport client;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private void start(SparkConf conf) throws Exception {
    server = TcpTestSupport.transport(conf, null);
    client = TcpTestSupport.transport(new SparkConf(false), null);
  }

  private File writeFile(byte[] content) throws Exception {
    File f = File.createTempFile("served", ".data", dir);
    Files.write(f.toPath(), content);
    return f;
  }

  private static MappedByteBuffer map(File f, long offset, long length) throws Exception {
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, offset, length);
    }
  }

  /** The plugin's check: the file still holds [0, end). */
  private static BackingCheck whole(File f, long end) {
    return () -> f.length() >= end ? null : "file is " + f.length() + " bytes, shorter than "
        + end;
  }

  /** Registers [offset, offset + length) of f as the plugin does (with its source). */
  private TcpRegion register(File f, long offset, long length) throws Exception {
    return (TcpRegion) server.register(map(f, offset, length), whole(f, offset + length),
        FileChannel.MapMode.READ_ONLY, new MappedFileSource(f, offset));
  }

  private static Throwable failure(ReadResult r) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> r.future.get(30, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void smallAndSendfileAnswersInOneBurstAreByteExact() throws Exception {
    start(new SparkConf(false));
    byte[] content = randomBytes(5 << 20, 11);
    File f = writeFile(content);
    // The region starts 1 MiB + 4 KiB into the file: sendfile must add the file offset.
    int base = (1 << 20) + 4096;
    int length = content.length - base;
    TcpRegion region = register(f, base, length);
    assertNotNull(region.file(), "a data region this long keeps a descriptor for sendfile");
    TransportChannel ch = client.connect(server.localAddress());
    Random rnd = new Random(12);
    int n = 240; // under maxReadsInFlightPerPeer: one batch, answered in bursts
    List<ReadResult> results = TcpTestSupport.results(n);
    List<ReadRequest> batch = new ArrayList<>();
    int[][] spans = new int[n][];
    int large = 0;
    for (int i = 0; i < n; i++) {
      int len;
      if (i % 3 == 0) {
        len = (64 << 10) + rnd.nextInt(1 << 20); // sendfile
        large++;
      } else if (i % 3 == 1) {
        len = (64 << 10) - 1 - rnd.nextInt(100); // just under the threshold: mapping
      } else {
        len = 1 + rnd.nextInt(4096);
      }
      int off = rnd.nextInt(length - len + 1);
      spans[i] = new int[] {off, len};
      batch.add(new ReadRequest(region.address() + off, region.key(), len, results.get(i), i));
    }
    ch.read(batch);
    for (int i = 0; i < n; i++) {
      assertArrayEquals(Arrays.copyOfRange(content, base + spans[i][0],
          base + spans[i][0] + spans[i][1]), results.get(i).future.get(30, TimeUnit.SECONDS),
          "read " + i);
    }
    assertTrue(large > 50);
    assertEquals(n, server.stats().readsServed.get());
    assertTrue(ch.isActive());
  }

  @Test
  void shortRegionsAndThresholdZeroHoldNoDescriptor() throws Exception {
    start(new SparkConf(false).set("spark.shuffle.rdma.tcp.sendfileThreshold", "0"));
    byte[] content = randomBytes(1 << 20, 13);
    File f = writeFile(content);
    TcpRegion region = register(f, 0, content.length);
    assertNull(region.file(), "threshold 0: never sendfile, no descriptor");
    TransportChannel ch = client.connect(server.localAddress());
    assertArrayEquals(content, ReadResult.read(ch, region.address(), region.key(), content.length));
    server.close();
    client.close();

    start(new SparkConf(false));
    File index = writeFile(randomBytes(264, 14)); // an index region: 33 offsets
    assertNull(register(index, 0, 264).file(), "a region under the threshold: no descriptor");
  }

  @Test
  void descriptorIsClosedOnceDeregisteredAndDrained() throws Exception {
    start(new SparkConf(false));
    byte[] content = randomBytes(2 << 20, 15);
    File f = writeFile(content);
    TcpRegion region = register(f, 0, content.length);
    TransportChannel ch = client.connect(server.localAddress());
    assertArrayEquals(content, ReadResult.read(ch, region.address(), region.key(), content.length));
    assertTrue(region.file().isOpen());
    server.deregister(region).get(10, TimeUnit.SECONDS);
    assertFalse(region.file().isOpen(), "the registration's descriptor must not leak");
    ReadResult after = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), 1 << 20, after, null)));
    assertTrue(failure(after).getMessage().endsWith(Refusal.NO_SUCH_BYTES));
  }

  @Test
  void truncatedFileIsRefusedOnTheSendfilePath() throws Exception {
    start(new SparkConf(false));
    byte[] content = randomBytes(2 << 20, 16);
    File f = writeFile(content);
    TcpRegion region = register(f, 0, content.length);
    TransportChannel ch = client.connect(server.localAddress());
    assertArrayEquals(Arrays.copyOf(content, 1 << 20),
        ReadResult.read(ch, region.address(), region.key(), 1 << 20));
    try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
      raf.setLength(1 << 20);
    }
    List<ReadResult> r = TcpTestSupport.results(2);
    ch.read(List.of(
        new ReadRequest(region.address(), region.key(), 1 << 20, r.get(0), null), // still inside the file
        new ReadRequest(region.address() + (1 << 20), region.key(), 1 << 20, r.get(1), null)));
    assertTrue(failure(r.get(0)).getMessage().contains("read refused"));
    assertTrue(failure(r.get(1)).getMessage().contains("shorter than"));
    assertEquals(2, server.stats().readsRefused.get());
    assertTrue(ch.isActive(), "a refused read must not close the connection");
  }

  @Test
  void fileReplacedUnderItsPathStillServesTheRegisteredBytes() throws Exception {
    start(new SparkConf(false));
    byte[] content = randomBytes(1 << 20, 17);
    File f = writeFile(content);
    TcpRegion region = register(f, 0, content.length);
    // A new attempt's output renamed over the path: the registration (mapping and
    // descriptor alike) still names the registered file, so its bytes are what is served.
    File next = writeFile(randomBytes(content.length, 18));
    Files.move(next.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    TransportChannel ch = client.connect(server.localAddress());
    assertArrayEquals(content, ReadResult.read(ch, region.address(), region.key(), content.length));
    assertArrayEquals(Arrays.copyOfRange(content, 4096, 4096 + 100),
        ReadResult.read(ch, region.address() + 4096, region.key(), 100));
  }
}
