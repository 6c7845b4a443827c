/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.apache.spark.shuffle.rdma.testing.TestFiles.loopbackTcp;
import static org.apache.spark.shuffle.rdma.testing.TestFiles.writeIndex;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resources come back: after hundreds of shuffles registered, read and unregistered, no
 * region, mapping, file descriptor or thread is left; tens of thousands of map outputs and
 * many concurrent readers against one server stay within bounds.
 */
class LoadAndLeakTest {
  @TempDir
  File dir;

  private static long openFds() throws IOException {
    try (var s = Files.list(Paths.get("/proc/self/fd"))) {
      return s.count();
    }
  }

  private long mappingsUnder(File root) throws IOException {
    String prefix = root.getCanonicalPath();
    return Files.readAllLines(Paths.get("/proc/self/maps")).stream()
        .filter(l -> l.contains(prefix)).count();
  }

  /** Byte {@code position} of output {@code file}: differs by file and by position. */
  private static byte pattern(int file, int position) {
    int x = (file * 0x9E3779B1) ^ (position * 0x85EBCA6B);
    x ^= x >>> 15;
    x *= 0x2C1B3C6D;
    return (byte) (x ^ (x >>> 13));
  }

  private static byte[] expected(int file, int from, int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = pattern(file, from + i);
    }
    return b;
  }

  /**
   * Writes map output number {@code file} (its own files, pattern content) with
   * {@code partitions} partitions of {@code each} bytes.
   */
  private static File[] output(File dir, String name, int partitions, int each, int file)
      throws IOException {
    File data = new File(dir, name + ".data");
    File index = new File(dir, name + ".index");
    byte[] bytes = expected(file, 0, partitions * each);
    Files.write(data.toPath(), bytes);
    long[] offsets = new long[partitions + 1];
    for (int p = 0; p <= partitions; p++) {
      offsets[p] = (long) p * each;
    }
    writeIndex(index, offsets);
    return new File[] {data, index};
  }

  @Test
  void hundredsOfShufflesLeaveNothingBehind() throws Exception {
    try (TcpTransport server = loopbackTcp(); TcpTransport client = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      TransportChannel ch = client.connect(server.localAddress());
      // Warm up once so lazily created event-loop threads and sockets count as baseline.
      File[] w = output(dir, "warm", 4, 100, -1);
      MapOutputDescriptor wd = registry.register(999, 1, w[0], w[1]);
      ReadResult.read(ch, wd.dataAddress(0), wd.dataKey(0), 100);
      registry.unregisterShuffle(999).get(10, TimeUnit.SECONDS);
      long fds = openFds();
      int threads = Thread.activeCount();

      for (int shuffle = 0; shuffle < 300; shuffle++) {
        for (int map = 0; map < 3; map++) {
          int file = shuffle * 3 + map;
          File[] f = output(dir, "s" + shuffle + "m" + map, 8, 512, file);
          MapOutputDescriptor d = registry.register(shuffle, map, f[0], f[1]);
          int partition = (shuffle + map) % 8;
          assertArrayEquals(expected(file, partition * 512, 512),
              ReadResult.read(ch, d.dataAddress(0) + partition * 512L, d.dataKey(0), 512),
              "shuffle " + shuffle + " map " + map + " partition " + partition);
        }
        registry.unregisterShuffle(shuffle).get(10, TimeUnit.SECONDS);
      }
      assertEquals(0, registry.outputCount());
      assertEquals(0, registry.registeredBytes());
      assertEquals(0, server.stats().regionsRegistered.get());
      assertEquals(0, server.stats().bytesRegistered.get());
      assertEquals(0, server.liveRegions());
      assertEquals(0, mappingsUnder(dir), "a shuffle file is still mapped");
      assertTrue(openFds() <= fds + 2, "file descriptors leaked: " + fds + " -> " + openFds());
      assertTrue(Thread.activeCount() <= threads + 2,
          "threads leaked: " + threads + " -> " + Thread.activeCount());
    }
  }

  @Test
  void tensOfThousandsOfMapOutputs() throws Exception {
    try (TcpTransport server = loopbackTcp(); TcpTransport client = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      int n = 20_000;
      List<MapOutputDescriptor> ds = new ArrayList<>(n);
      for (int map = 0; map < n; map++) {
        // Each output its own files and content: a key or address mixed up between outputs
        // reads another output's bytes, and the check below sees it.
        File[] f = output(dir, "m" + map, 2, 64, map);
        ds.add(registry.register(0, map, f[0], f[1]));
      }
      assertEquals(n, registry.outputCount());
      assertEquals(2L * n, server.stats().regionsRegistered.get());
      TransportChannel ch = client.connect(server.localAddress());
      for (int map = 0; map < n; map += 97) {
        MapOutputDescriptor d = ds.get(map);
        int partition = map % 2;
        assertArrayEquals(expected(map, partition * 64, 64),
            ReadResult.read(ch, d.dataAddress(0) + partition * 64L, d.dataKey(0), 64), "map " + map);
      }
      assertTrue(mappingsUnder(dir) > 0, "the check must see live mappings");
      registry.unregisterShuffle(0).get(60, TimeUnit.SECONDS);
      assertEquals(0, server.stats().regionsRegistered.get());
      assertEquals(0, mappingsUnder(dir));
    }
  }

  @Test
  void manyConcurrentReadersAgainstOneServer() throws Exception {
    byte[] content = expected(5, 0, 1 << 20);
    Path file = new File(dir, "hot.data").toPath();
    Files.write(file, content);
    File index = new File(dir, "hot.index");
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(index))) {
      out.writeLong(0);
      out.writeLong(content.length);
    }
    int readers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(readers);
    List<TcpTransport> clients = new ArrayList<>();
    try (TcpTransport server = loopbackTcp()) {
      MapOutputDescriptor d = new MapOutputRegistry(server, 1L << 30, "e")
          .register(0, 0, file.toFile(), index);
      List<Future<Integer>> done = new ArrayList<>();
      for (int r = 0; r < readers; r++) {
        TcpTransport c = loopbackTcp();
        clients.add(c);
        int seed = r;
        done.add(pool.submit(() -> {
          TransportChannel ch = c.connect(server.localAddress());
          java.util.Random rnd = new java.util.Random(seed);
          for (int i = 0; i < 200; i++) {
            int len = 1 + rnd.nextInt(32 * 1024);
            int off = rnd.nextInt(content.length - len);
            assertArrayEquals(Arrays.copyOfRange(content, off, off + len),
                ReadResult.read(ch, d.dataAddress(0) + off, d.dataKey(0), len));
          }
          return 200;
        }));
      }
      int total = 0;
      for (Future<Integer> f : done) {
        total += f.get(120, TimeUnit.SECONDS);
      }
      assertEquals(readers * 200, total);
      assertEquals(readers * 200L, server.stats().readsServed.get());
    } finally {
      clients.forEach(TcpTransport::close);
      pool.shutdownNow();
    }
  }
}
