/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.network.buffer.FileSegmentManagedBuffer;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.DownloadFile;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.shuffle.DownloadFileWritableChannel;
import org.apache.spark.network.shuffle.SimpleDownloadFile;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
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

  private ReaderFixture f;
  private ReaderFixture.Output output;

  @BeforeEach
  void setUp() throws IOException {
    f = new ReaderFixture(dir, MAX_READ, REGION);
    output = f.register(0, 7, SIZES, 5);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private byte[] expected(int startReduce, int endReduce) {
    return output.bytes(startReduce, endReduce);
  }

  /** Spark's download files, in a folder of this test, counting what was registered. */
  private class Downloads implements DownloadFileManager {
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

  private FetchOutcomes fetch(DownloadFileManager downloads, ReaderStats stats, int[][] ranges)
      throws Exception {
    assertEquals(MAX_READ, f.channel.maxReadLength());
    List<BlockFetch.Block> blocks = new ArrayList<>();
    for (int[] r : ranges) {
      blocks.add(new BlockFetch.Block("b" + r[0] + "-" + r[1], r[0], r[1], output.descriptor,
          f.server.localAddress()));
    }
    return f.fetch(new IndexCache(1 << 20, stats), stats, blocks, downloads);
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
    FetchOutcomes out = fetch(null, stats, ranges);
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
    FetchOutcomes out = fetch(downloads, stats, ranges);
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
    f.server.deregister(output.regions.get(2)).get();
    ReaderStats stats = new ReaderStats();
    Downloads downloads = new Downloads();
    FetchOutcomes out = fetch(downloads, stats, EVERY_PARTITION);
    assertEquals(2, out.failures.size(), "partition 2 and 4 read region 2: " + out.bytes.keySet());
    assertTrue(out.failures.containsKey("b2-3") && out.failures.containsKey("b4-5"));
    assertArrayEquals(expected(0, 1), out.bytes.get("b0-1"));
    assertArrayEquals(expected(1, 2), out.bytes.get("b1-2"));
    assertEquals(2, stats.blockReadFailures.get());
    assertEquals(2, downloads.registered.get());
    // Only the two good blocks' files remain: the failed ones were deleted.
    String[] left = dir.list((d, name) -> name.startsWith("download-"));
    assertEquals(2, left.length, Arrays.toString(left));
  }

  /**
   * Download files on a disk that stalls: the first write into any of them blocks until
   * {@link #letGo}, and each write records the thread it ran on.
   */
  private final class StallingDownloads extends Downloads {
    final CountDownLatch stalled = new CountDownLatch(1);
    final CountDownLatch letGo = new CountDownLatch(1);
    final Set<String> writerThreads = ConcurrentHashMap.newKeySet();

    @Override
    public DownloadFile createTempFile(TransportConf conf) {
      return withWriteHook(super.createTempFile(conf), () -> {
        writerThreads.add(Thread.currentThread().getName());
        stalled.countDown();
        try {
          if (!letGo.await(60, TimeUnit.SECONDS)) {
            throw new IOException("the test never let the write go");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException(e);
        }
      });
    }
  }

  /** Runs before each write into one download file; it may throw the disk's error. */
  private interface WriteHook {
    void beforeWrite() throws IOException;
  }

  /** {@code real} whose channel calls {@code hook} before every write it passes on. */
  private static DownloadFile withWriteHook(DownloadFile real, WriteHook hook) {
    return new DownloadFile() {
      @Override
      public boolean delete() {
        return real.delete();
      }

      @Override
      public DownloadFileWritableChannel openForWriting() throws IOException {
        DownloadFileWritableChannel out = real.openForWriting();
        return new DownloadFileWritableChannel() {
          @Override
          public int write(ByteBuffer src) throws IOException {
            hook.beforeWrite();
            return out.write(src);
          }

          @Override
          public ManagedBuffer closeAndRead() throws IOException {
            return out.closeAndRead();
          }

          @Override
          public boolean isOpen() {
            return out.isOpen();
          }

          @Override
          public void close() throws IOException {
            out.close();
          }
        };
      }

      @Override
      public String path() {
        return real.path();
      }
    };
  }

  /**
   * Issue 25: a block fetched to disk is written off the transport's callback threads. While
   * the write into its download file blocks (a stalled disk), another fetch over the same
   * connection, whose completions the same transport thread delivers, still completes; once
   * the disk moves again the stalled block lands whole. With the writes on the callback
   * thread (before this change) the second fetch got nothing until the disk moved.
   */
  @Test
  void aStalledDownloadFileDoesNotHoldUpOtherFetchesCompletions() throws Exception {
    ReaderStats stats = new ReaderStats();
    IndexCache cache = new IndexCache(1 << 20, stats);
    StallingDownloads disk = new StallingDownloads();
    List<BlockFetch.Block> toDisk = new ArrayList<>();
    toDisk.add(new BlockFetch.Block("disk-0-5", 0, 5, output.descriptor, f.server.localAddress()));
    FetchOutcomes stalled = f.start(cache, stats, toDisk, disk);
    try {
      assertTrue(disk.stalled.await(30, TimeUnit.SECONDS), "the download never wrote");
      // The window still bounds what a stalled file holds: its first pieces, no more.
      Thread.sleep(200);
      assertEquals(BlockFetch.DISK_WINDOW, stats.dataReads.get());
      List<BlockFetch.Block> inMemory = new ArrayList<>();
      for (int[] r : EVERY_PARTITION) {
        inMemory.add(new BlockFetch.Block("b" + r[0] + "-" + r[1], r[0], r[1],
            output.descriptor, f.server.localAddress()));
      }
      FetchOutcomes other = f.start(cache, stats, inMemory, null);
      other.all.get(20, TimeUnit.SECONDS); // before: TimeoutException, the thread was stuck
      assertTrue(other.failures.isEmpty(), other.failures.toString());
      for (int[] r : EVERY_PARTITION) {
        assertArrayEquals(expected(r[0], r[1]), other.bytes.get("b" + r[0] + "-" + r[1]));
      }
      assertFalse(stalled.all.isDone(), "the stalled block ended while its disk stalled");
      assertEquals(0, stats.blocksToDisk.get());
    } finally {
      disk.letGo.countDown();
    }
    stalled.all.get(30, TimeUnit.SECONDS);
    assertTrue(stalled.failures.isEmpty(), stalled.failures.toString());
    assertArrayEquals(expected(0, 5), stalled.bytes.get("disk-0-5"));
    assertEquals(FileSegmentManagedBuffer.class, stalled.kinds.get("disk-0-5"));
    assertEquals(1, stats.blocksToDisk.get());
    assertEquals(1, disk.registered.get());
    assertEquals(Set.of("rdma-shuffle-download-writer"), disk.writerThreads);
  }

  /**
   * A write into a download file fails (a full disk) on the writer thread: only that block
   * fails, with the disk's error, its file is deleted, and the other blocks of the fetch land
   * whole.
   */
  @Test
  void aFailingDownloadWriteFailsOnlyItsBlockAndDeletesItsFile() throws Exception {
    ReaderStats stats = new ReaderStats();
    Downloads downloads = new Downloads() {
      @Override
      public DownloadFile createTempFile(TransportConf conf) {
        DownloadFile real = super.createTempFile(conf);
        if (created.get() != 2) {
          return real;
        }
        AtomicInteger writes = new AtomicInteger(); // the second block's file: its second write fails
        return withWriteHook(real, () -> {
          if (writes.incrementAndGet() == 2) {
            throw new IOException("disk full");
          }
        });
      }
    };
    int[][] ranges = {{0, 1}, {1, 2}, {4, 5}};
    FetchOutcomes out = fetch(downloads, stats, ranges);
    assertEquals(1, out.failures.size(), out.failures.toString());
    assertEquals("disk full", out.failures.get("b1-2").getMessage());
    assertArrayEquals(expected(0, 1), out.bytes.get("b0-1"));
    assertArrayEquals(expected(4, 5), out.bytes.get("b4-5"));
    assertEquals(2, stats.blocksToDisk.get());
    assertEquals(1, stats.blockReadFailures.get());
    assertEquals(2, downloads.registered.get());
    String[] left = dir.list((d, name) -> name.startsWith("download-"));
    assertEquals(2, left.length, Arrays.toString(left));
    assertFalse(Arrays.asList(left).contains("download-2"), Arrays.toString(left));
  }
}
