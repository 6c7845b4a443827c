/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.apache.spark.shuffle.rdma.testing.TestFiles.mapFile;
import static org.apache.spark.shuffle.rdma.testing.TestFiles.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.MappedByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TcpTransportTest {
  @TempDir
  File dir;

  private TcpTransport server;
  private TcpTransport client;

  @BeforeEach
  void start() throws Exception {
    server = TcpTestSupport.transport();
    client = TcpTestSupport.transport();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  private static byte[] get(ReadResult r) throws Exception {
    return r.future.get(30, TimeUnit.SECONDS);
  }

  /** The server's reason for refusing a read: the failure message after "failed: ". */
  private static String cause(ReadResult r) {
    String m = failure(r).getMessage();
    return m.substring(m.indexOf("failed: ") + "failed: ".length());
  }

  private static Throwable failure(ReadResult r) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> r.future.get(30, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void readsManySizesAndOffsetsByteExact() throws Exception {
    byte[] content = randomBytes(3 << 20, 1);
    RegisteredRegion region = server.register(mapFile(dir, content));
    TransportChannel ch = client.connect(server.localAddress());
    Random rnd = new Random(2);
    int n = 200; // under maxReadsInFlightPerPeer, so one batch
    List<ReadResult> results = TcpTestSupport.results(n);
    List<ReadRequest> batch = new ArrayList<>();
    int[][] spans = new int[n][];
    for (int i = 0; i < n; i++) {
      int len = i % 50 == 0 ? 1 + rnd.nextInt(1 << 20) : 1 + rnd.nextInt(4096);
      int off = rnd.nextInt(content.length - len + 1);
      spans[i] = new int[] {off, len};
      batch.add(new ReadRequest(region.address() + off, region.key(), len, results.get(i), i));
    }
    ch.read(batch);
    for (int i = 0; i < n; i++) {
      assertArrayEquals(Arrays.copyOfRange(content, spans[i][0], spans[i][0] + spans[i][1]),
          get(results.get(i)), "read " + i);
    }
    assertEquals(n, server.stats().readsServed.get());
    assertEquals(n, client.stats().readsCompleted.get());
    assertEquals(1, client.stats().batchesPosted.get());
  }

  @Test
  void wrongKeyIsRefusedAndServerKeepsServing() throws Exception {
    byte[] content = randomBytes(10_000, 3);
    RegisteredRegion region = server.register(mapFile(dir, content));
    TransportChannel ch = client.connect(server.localAddress());
    List<ReadResult> r = TcpTestSupport.results(2);
    ch.read(List.of(
        new ReadRequest(region.address(), region.key() ^ 0x5a5a5a5a, 100, r.get(0), null),
        new ReadRequest(region.address(), region.key(), 100, r.get(1), null)));
    assertTrue(failure(r.get(0)).getMessage().contains(Refusal.NO_SUCH_BYTES));
    assertArrayEquals(Arrays.copyOf(content, 100), get(r.get(1)));
    assertEquals(1, server.stats().readsRefused.get());
    assertTrue(ch.isActive(), "a refused read must not close the connection");
  }

  @Test
  void readsOfAFileChangedUnderItsRegistrationAreRefused() throws Exception {
    byte[] content = randomBytes(10_000, 6);
    java.util.concurrent.atomic.AtomicReference<String> problem =
        new java.util.concurrent.atomic.AtomicReference<>();
    RegisteredRegion region = server.register(mapFile(dir, content), problem::get);
    TransportChannel ch = client.connect(server.localAddress());
    ReadResult ok = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), 100, ok, null)));
    assertArrayEquals(Arrays.copyOf(content, 100), get(ok));
    problem.set("map output file x.data is 10 bytes, shorter than the 10000 registered");
    ReadResult refused = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), 100, refused, null)));
    assertTrue(failure(refused).getMessage().contains("shorter than the 10000 registered"));
    assertEquals(1, server.stats().readsRefused.get());
    assertTrue(ch.isActive(), "a refused read must not close the connection");
  }

  /**
   * In one batch, the backing-file check runs once per run of reads of one region (one stat
   * per map output, not per block) and still per region: a damaged region's reads are
   * refused between two served runs of an intact one.
   */
  @Test
  void backingCheckRunsOncePerRegionRunInABatch() throws Exception {
    byte[] a = randomBytes(4096, 8);
    byte[] b = randomBytes(4096, 9);
    java.util.concurrent.atomic.AtomicInteger checksOfA =
        new java.util.concurrent.atomic.AtomicInteger();
    RegisteredRegion ra = server.register(mapFile(dir, a), () -> {
      checksOfA.incrementAndGet();
      return null;
    });
    RegisteredRegion rb = server.register(mapFile(dir, b), () -> "x.data was truncated");
    TransportChannel ch = client.connect(server.localAddress());
    List<ReadResult> r = TcpTestSupport.results(5);
    ch.read(List.of(
        new ReadRequest(ra.address(), ra.key(), 10, r.get(0), null),
        new ReadRequest(ra.address() + 100, ra.key(), 10, r.get(1), null),
        new ReadRequest(rb.address(), rb.key(), 10, r.get(2), null),
        new ReadRequest(ra.address() + 200, ra.key(), 10, r.get(3), null),
        new ReadRequest(ra.address() + 300, ra.key(), 10, r.get(4), null)));
    assertArrayEquals(Arrays.copyOfRange(a, 0, 10), get(r.get(0)));
    assertArrayEquals(Arrays.copyOfRange(a, 100, 110), get(r.get(1)));
    assertTrue(failure(r.get(2)).getMessage().contains("x.data was truncated"));
    assertArrayEquals(Arrays.copyOfRange(a, 200, 210), get(r.get(3)));
    assertArrayEquals(Arrays.copyOfRange(a, 300, 310), get(r.get(4)));
    assertEquals(2, checksOfA.get(), "one check per run of reads of the intact region");
  }

  @Test
  void outOfBoundsReadsAreRefused() throws Exception {
    byte[] content = randomBytes(4096, 4);
    RegisteredRegion region = server.register(mapFile(dir, content));
    TransportChannel ch = client.connect(server.localAddress());
    List<ReadResult> r = TcpTestSupport.results(4);
    ch.read(List.of(
        new ReadRequest(region.address() + 4000, region.key(), 97, r.get(0), null),           // past the end
        new ReadRequest(region.address() + 4096, region.key(), 1, r.get(1), null),            // at the end
        new ReadRequest(region.address() + (1L << 33), region.key(), 1, r.get(2), null),        // beyond 32 bits
        new ReadRequest(region.address() + 4095, region.key(), 1, r.get(3), null)));          // last byte: ok
    assertEquals(Refusal.NO_SUCH_BYTES, cause(r.get(0)));
    assertEquals(Refusal.NO_SUCH_BYTES, cause(r.get(1)));
    assertEquals(Refusal.NO_SUCH_BYTES, cause(r.get(2)));
    assertArrayEquals(new byte[] {content[4095]}, get(r.get(3)));
  }

  @Test
  void revokedKeyIsRefusedAndDeregistrationCompletes() throws Exception {
    byte[] content = randomBytes(8192, 5);
    MappedByteBuffer mapping = mapFile(dir, content);
    RegisteredRegion region = server.register(mapping);
    TransportChannel ch = client.connect(server.localAddress());
    ReadResult before = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), 8192, before, null)));
    assertArrayEquals(content, get(before));
    server.deregister(region).get(10, TimeUnit.SECONDS);
    assertFalse(region.isLive());
    assertEquals(0, server.liveRegions());
    assertEquals(0, server.stats().bytesRegistered.get());
    ReadResult after = new ReadResult();
    ch.read(List.of(new ReadRequest(region.address(), region.key(), 10, after, null)));
    assertTrue(failure(after).getMessage().contains(Refusal.NO_SUCH_BYTES));
    // Idempotent.
    server.deregister(region).get(1, TimeUnit.SECONDS);
    assertEquals(0, server.stats().regionsRegistered.get());
  }

  /**
   * Through a client whose window is {@code window} reads, reads {@code n} consecutive
   * 100-byte blocks in one batch and checks every byte; returns the client's flush count.
   */
  private long readThroughWindow(int window, int n, long seed) throws Exception {
    client.close();
    client = TcpTestSupport.transport(new SparkConf(false)
        .set("spark.shuffle.rdma.maxReadsInFlightPerPeer", Integer.toString(window)), null);
    byte[] content = randomBytes(n * 100, seed);
    RegisteredRegion region = server.register(mapFile(dir, content));
    TransportChannel ch = client.connect(server.localAddress());
    List<ReadResult> r = TcpTestSupport.results(n);
    List<ReadRequest> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      batch.add(new ReadRequest(region.address() + i * 100, region.key(), 100, r.get(i), null));
    }
    ch.read(batch);
    for (int i = 0; i < n; i++) {
      assertArrayEquals(Arrays.copyOfRange(content, i * 100, i * 100 + 100), get(r.get(i)));
    }
    return client.stats().batchesPosted.get();
  }

  @Test
  void boundedReadsInFlightStillCompleteEverything() throws Exception {
    assertTrue(readThroughWindow(2, 300, 6) > 1, "the bound must split the batch");
  }

  @Test
  void waitingReadsGoOutInQuarterWindowSteps() throws Exception {
    // One write (and one server wake-up) per answered read was the cost this avoids: with a
    // window of 16, reads waiting behind it must go out at least 4 per flush.
    int window = 16;
    int n = 400;
    long batches = readThroughWindow(window, n, 8);
    long step = window / 4;
    long most = 1 + (n - window + step - 1) / step;
    assertTrue(batches <= most, batches + " flushes for " + n + " reads; at most " + most
        + " expected with refills of " + step);
  }

  /** Identical reads in one batch: each is served and each gets the bytes. */
  @Test
  void identicalReadsInFlightEachGetTheirBytes() throws Exception {
    byte[] content = randomBytes(1000, 7);
    RegisteredRegion region = server.register(mapFile(dir, content));
    TransportChannel ch = client.connect(server.localAddress());
    List<ReadResult> r = TcpTestSupport.results(3);
    ch.read(List.of(
        new ReadRequest(region.address() + 10, region.key(), 50, r.get(0), null),
        new ReadRequest(region.address() + 10, region.key(), 50, r.get(1), null),
        new ReadRequest(region.address() + 10, region.key(), 50, r.get(2), null)));
    for (ReadResult x : r) {
      assertArrayEquals(Arrays.copyOfRange(content, 10, 60), get(x));
    }
    assertEquals(3, server.stats().readsServed.get());
  }

  @Test
  void oneChannelPerPeerIsShared() throws Exception {
    TransportChannel a = client.connect(server.localAddress());
    TransportChannel b = client.connect(server.localAddress());
    assertTrue(a == b);
    assertEquals(1, client.stats().connectionsOpened.get());
  }

  /** A sparse file of {@code length} bytes, mapped: no memory or disk behind the hole. */
  private java.nio.MappedByteBuffer sparseMapping(long length, byte last) throws Exception {
    File f = new File(dir, "sparse-" + length);
    try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f, "rw")) {
      raf.setLength(length);
      raf.seek(length - 1);
      raf.write(last);
    }
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f.toPath(),
        java.nio.file.StandardOpenOption.READ)) {
      return ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, length);
    }
  }

  @Test
  void regionsOverOneGibAreRejected() throws Exception {
    // One byte over 1 GiB (a sparse file: nothing is allocated): refused, nothing registered.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> server.register(sparseMapping((1L << 30) + 1, (byte) 7)));
    assertTrue(e.getMessage().contains("[1, 1 GiB]"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> server.register(java.nio.ByteBuffer.allocateDirect(0)));
    assertEquals(0, server.liveRegions());
    assertEquals(0, server.stats().regionsRegistered.get());
    // Exactly 1 GiB is the largest region: accepted, and its last byte reads back.
    RegisteredRegion max = server.register(sparseMapping(1L << 30, (byte) 0x3c));
    assertEquals(1L << 30, max.length());
    ReadResult r = new ReadResult();
    client.connect(server.localAddress())
        .read(List.of(new ReadRequest(max.address() + (1L << 30) - 2, max.key(), 2, r, null)));
    assertArrayEquals(new byte[] {0, 0x3c}, get(r));
  }
}
