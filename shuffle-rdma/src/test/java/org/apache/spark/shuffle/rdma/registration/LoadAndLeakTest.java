package org.apache.spark.shuffle.rdma.registration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
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

  private static TcpTransport tcp() throws IOException {
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(new SparkConf(false)),
        "127.0.0.1", null, "app", 1));
  }

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

  /** Writes a map output with {@code partitions} partitions of {@code each} bytes. */
  private static File[] output(File dir, String name, int partitions, int each, byte fill)
      throws IOException {
    File data = new File(dir, name + ".data");
    File index = new File(dir, name + ".index");
    byte[] bytes = new byte[partitions * each];
    Arrays.fill(bytes, fill);
    Files.write(data.toPath(), bytes);
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(index))) {
      for (int p = 0; p <= partitions; p++) {
        out.writeLong((long) p * each);
      }
    }
    return new File[] {data, index};
  }

  private static byte[] read(TransportChannel ch, long addr, int key, int len) throws Exception {
    CompletableFuture<byte[]> f = new CompletableFuture<>();
    ch.read(List.of(new ReadRequest(addr, key, len, new ReadCallback() {
      @Override
      public void onSuccess(ReadRequest r, ManagedBuffer data) {
        try {
          ByteBuffer b = data.nioByteBuffer();
          byte[] out = new byte[b.remaining()];
          b.get(out);
          f.complete(out);
        } catch (IOException e) {
          f.completeExceptionally(e);
        }
      }

      @Override
      public void onFailure(ReadRequest r, Throwable cause) {
        f.completeExceptionally(cause);
      }
    }, null)));
    return f.get(30, TimeUnit.SECONDS);
  }

  @Test
  void hundredsOfShufflesLeaveNothingBehind() throws Exception {
    try (TcpTransport server = tcp(); TcpTransport client = tcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      TransportChannel ch = client.connect(server.localAddress());
      // Warm up once so lazily created event-loop threads and sockets count as baseline.
      File[] w = output(dir, "warm", 4, 100, (byte) 1);
      MapOutputDescriptor wd = registry.register(999, 1, w[0], w[1]);
      read(ch, wd.dataAddress(0), wd.dataKey(0), 100);
      registry.unregisterShuffle(999).get(10, TimeUnit.SECONDS);
      long fds = openFds();
      int threads = Thread.activeCount();

      for (int shuffle = 0; shuffle < 300; shuffle++) {
        for (int map = 0; map < 3; map++) {
          File[] f = output(dir, "s" + shuffle + "m" + map, 8, 512, (byte) (shuffle + map));
          MapOutputDescriptor d = registry.register(shuffle, map, f[0], f[1]);
          byte[] got = read(ch, d.dataAddress(0) + 512, d.dataKey(0), 512);
          assertEquals((byte) (shuffle + map), got[0]);
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
    try (TcpTransport server = tcp(); TcpTransport client = tcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      File[] f = output(dir, "shared", 2, 64, (byte) 9);
      int n = 20_000;
      List<MapOutputDescriptor> ds = new ArrayList<>(n);
      for (int map = 0; map < n; map++) {
        ds.add(registry.register(0, map, f[0], f[1]));
      }
      assertEquals(n, registry.outputCount());
      assertEquals(2L * n, server.stats().regionsRegistered.get());
      TransportChannel ch = client.connect(server.localAddress());
      for (int map = 0; map < n; map += 997) {
        MapOutputDescriptor d = ds.get(map);
        assertEquals(9, read(ch, d.dataAddress(0), d.dataKey(0), 64)[63]);
      }
      assertTrue(mappingsUnder(dir) > 0, "the check must see live mappings");
      registry.unregisterShuffle(0).get(60, TimeUnit.SECONDS);
      assertEquals(0, server.stats().regionsRegistered.get());
      assertEquals(0, mappingsUnder(dir));
    }
  }

  @Test
  void manyConcurrentReadersAgainstOneServer() throws Exception {
    byte[] content = new byte[1 << 20];
    new java.util.Random(5).nextBytes(content);
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
    try (TcpTransport server = tcp()) {
      MapOutputDescriptor d = new MapOutputRegistry(server, 1L << 30, "e")
          .register(0, 0, file.toFile(), index);
      List<Future<Integer>> done = new ArrayList<>();
      for (int r = 0; r < readers; r++) {
        TcpTransport c = tcp();
        clients.add(c);
        int seed = r;
        done.add(pool.submit(() -> {
          TransportChannel ch = c.connect(server.localAddress());
          java.util.Random rnd = new java.util.Random(seed);
          for (int i = 0; i < 200; i++) {
            int len = 1 + rnd.nextInt(32 * 1024);
            int off = rnd.nextInt(content.length - len);
            assertArrayEquals(Arrays.copyOfRange(content, off, off + len),
                read(ch, d.dataAddress(0) + off, d.dataKey(0), len));
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
