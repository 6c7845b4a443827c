/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.FileSegmentManagedBuffer;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.DownloadFile;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.shuffle.SimpleDownloadFile;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader's block fetch against the real tcp transport on loopback, with a real map
 * output (index and data files, mmapped and registered in 1 MiB regions) and reads limited
 * to 64 KiB: blocks larger than one read, blocks across region boundaries, empty blocks,
 * assembled in memory or streamed into Spark's download files.
 */
class BlockFetchTest {
  private static final int REGION = 1 << 20;
  private static final int MAX_READ = 64 << 10;
  /** Partition sizes: tiny, several reads, across two region boundaries, empty, 10 reads. */
  private static final int[] SIZES = {100, 300 << 10, (2 << 20) + 12345, 0, 640 << 10};

  @TempDir
  File dir;

  private TcpTransport server;
  private TcpTransport client;
  private byte[] data;
  private MapOutputDescriptor descriptor;
  private final List<RegisteredRegion> dataRegions = new ArrayList<>();
  private final TransportConf transportConf =
      new TransportConf("shuffle", MapConfigProvider.EMPTY);

  private static TcpTransport transport() throws IOException {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-test")
        .set("spark.shuffle.rdma.maxReadSize", String.valueOf(MAX_READ))
        .set("spark.shuffle.rdma.regionSize", String.valueOf(REGION));
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", null,
        "app-test", 1));
  }

  @BeforeEach
  void setUp() throws IOException {
    server = transport();
    client = transport();
    int total = Arrays.stream(SIZES).sum();
    data = new byte[total];
    new Random(5).nextBytes(data);
    ByteBuffer index = ByteBuffer.allocate(8 * (SIZES.length + 1));
    long off = 0;
    index.putLong(off);
    for (int s : SIZES) {
      off += s;
      index.putLong(off);
    }
    MappedByteBuffer indexMap = map("index", index.array());
    MappedByteBuffer dataMap = map("data", data);
    RegisteredRegion indexRegion = server.register(indexMap);
    int regions = (total + REGION - 1) / REGION;
    long[] addresses = new long[regions];
    int[] keys = new int[regions];
    for (int r = 0; r < regions; r++) {
      ByteBuffer slice = dataMap.duplicate();
      slice.position(r * REGION).limit(Math.min(total, (r + 1) * REGION));
      RegisteredRegion region = server.register(slice.slice());
      dataRegions.add(region);
      addresses[r] = region.address();
      keys[r] = region.key();
    }
    descriptor = new MapOutputDescriptor(0, 7, "exec-1", SIZES.length, indexRegion.address(),
        indexRegion.key(), total, REGION, addresses, keys);
  }

  @AfterEach
  void tearDown() {
    client.close();
    server.close();
  }

  private MappedByteBuffer map(String name, byte[] content) throws IOException {
    File f = new File(dir, name);
    Files.write(f.toPath(), content);
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, content.length);
    }
  }

  private byte[] expected(int startReduce, int endReduce) {
    int from = Arrays.stream(SIZES, 0, startReduce).sum();
    int to = Arrays.stream(SIZES, 0, endReduce).sum();
    return Arrays.copyOfRange(data, from, to);
  }

  /** Spark's download files, in a folder of this test, counting what was registered. */
  private final class Downloads implements DownloadFileManager {
    final AtomicInteger created = new AtomicInteger();
    final AtomicInteger registered = new AtomicInteger();

    @Override
    public DownloadFile createTempFile(TransportConf conf) {
      return new SimpleDownloadFile(new File(dir, "download-" + created.incrementAndGet()), conf);
    }

    @Override
    public boolean registerTempFileToClean(DownloadFile file) {
      registered.incrementAndGet();
      return true;
    }
  }

  /** Outcomes by block id: the bytes (copied at once) and the buffer's class, or the error. */
  private static final class Outcomes implements BlockFetchingListener {
    final Map<String, byte[]> bytes = new ConcurrentHashMap<>();
    final Map<String, Class<?>> kinds = new ConcurrentHashMap<>();
    final Map<String, Throwable> failures = new ConcurrentHashMap<>();
    final CompletableFuture<Void> all = new CompletableFuture<>();
    final int expected;

    Outcomes(int expected) {
      this.expected = expected;
    }

    @Override
    public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
      try {
        ByteBuffer b = data.nioByteBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        bytes.put(blockId, out);
        kinds.put(blockId, data.getClass());
      } catch (IOException e) {
        failures.put(blockId, e);
      }
      done();
    }

    @Override
    public void onBlockFetchFailure(String blockId, Throwable e) {
      failures.put(blockId, e);
      done();
    }

    private synchronized void done() {
      if (bytes.size() + failures.size() == expected) {
        all.complete(null);
      }
    }
  }

  private Outcomes fetch(DownloadFileManager downloads, ReaderStats stats, int[][] ranges)
      throws Exception {
    TransportChannel ch = client.connect(server.localAddress());
    assertEquals(MAX_READ, ch.maxReadLength());
    List<BlockFetch.Block> blocks = new ArrayList<>();
    for (int[] r : ranges) {
      blocks.add(new BlockFetch.Block("b" + r[0] + "-" + r[1], r[0], r[1], descriptor,
          server.localAddress()));
    }
    Outcomes out = new Outcomes(blocks.size());
    new BlockFetch(blocks, ch, out, downloads, transportConf, stats,
        new IndexCache(1 << 20, stats)).start();
    out.all.get(30, TimeUnit.SECONDS);
    return out;
  }

  private static final int[][] EVERY_PARTITION = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}};

  private static int pieces(int[][] ranges) {
    int n = 0;
    for (int[] r : ranges) {
      int from = Arrays.stream(SIZES, 0, r[0]).sum();
      int to = Arrays.stream(SIZES, 0, r[1]).sum();
      n += PiecePlan.plan(from, to, REGION, MAX_READ).size();
    }
    return n;
  }

  @Test
  void largeBlocksAreAssembledInMemoryFromPieces() throws Exception {
    ReaderStats stats = new ReaderStats();
    int[][] ranges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {1, 5}};
    Outcomes out = fetch(null, stats, ranges);
    assertTrue(out.failures.isEmpty(), out.failures.toString());
    for (int[] r : ranges) {
      assertArrayEquals(expected(r[0], r[1]), out.bytes.get("b" + r[0] + "-" + r[1]),
          "block " + r[0] + "-" + r[1]);
    }
    assertEquals(pieces(ranges), stats.dataReads.get());
    assertTrue(stats.dataReads.get() > 40, "the blocks were not split: " + stats.dataReads);
    assertEquals(0, stats.blocksToDisk.get());
    assertEquals(ranges.length, stats.remoteBlocks.get());
  }

  @Test
  void blocksOverTheMemoryThresholdStreamIntoDownloadFiles() throws Exception {
    ReaderStats stats = new ReaderStats();
    Downloads downloads = new Downloads();
    int[][] ranges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {0, 5}};
    Outcomes out = fetch(downloads, stats, ranges);
    assertTrue(out.failures.isEmpty(), out.failures.toString());
    for (int[] r : ranges) {
      String id = "b" + r[0] + "-" + r[1];
      assertArrayEquals(expected(r[0], r[1]), out.bytes.get(id), "block " + id);
      if (r[1] - r[0] != 1 || SIZES[r[0]] > 0) {
        assertEquals(FileSegmentManagedBuffer.class, out.kinds.get(id), id);
      }
    }
    assertEquals(5, stats.blocksToDisk.get()); // every non-empty block
    assertEquals(5, downloads.registered.get());
    assertEquals(pieces(ranges), stats.dataReads.get());
  }

  @Test
  void aRevokedRegionFailsOnlyItsBlockAndDeletesItsDownloadFile() throws Exception {
    // Partition 2 spans regions 0 to 2, partition 4 lies in region 2: revoke region 2.
    server.deregister(dataRegions.get(2)).get();
    ReaderStats stats = new ReaderStats();
    Downloads downloads = new Downloads();
    Outcomes out = fetch(downloads, stats, EVERY_PARTITION);
    assertEquals(2, out.failures.size(), "partition 2 and 4 read region 2: " + out.bytes.keySet());
    assertTrue(out.failures.containsKey("b2-3") && out.failures.containsKey("b4-5"));
    assertArrayEquals(expected(0, 1), out.bytes.get("b0-1"));
    assertArrayEquals(expected(1, 2), out.bytes.get("b1-2"));
    assertEquals(2, stats.failedBlocks.get());
    assertEquals(2, downloads.registered.get());
    // Only the two good blocks' files remain: the failed ones were deleted.
    String[] left = dir.list((d, name) -> name.startsWith("download-"));
    assertEquals(2, left.length, Arrays.toString(left));
  }
}
