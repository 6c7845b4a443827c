/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.apache.spark.shuffle.rdma.reader.ReaderFixture.block;
import static org.apache.spark.shuffle.rdma.reader.ReaderFixture.id;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.List;

import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.reader.ReaderFixture.Output;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Adjacent blocks of one map output requested in one fetch are read by one READ and handed
 * to Spark as slices of it, over the real tcp transport: only when their bytes follow each
 * other, never across a region boundary (each region has its own key) and never over the
 * channel's longest read. Indexes are cached first, so the data round is the only batch.
 */
class CoalescingTest {
  private static final int MAX_READ = 64 << 10;
  private static final long REGION = 128 << 10;
  /**
   * Partitions: 0..2 small and adjacent; 3 fills region 0 up to 2 KiB before its end; 4
   * (1 KiB) ends 1 KiB before it; 5 (3 KiB) crosses into region 1; 6..9 are 20 KiB each
   * (three fit one READ, four do not); 10 is empty; 11 small.
   */
  private static final int[] SIZES = {
      700, 1300, 2100, (128 << 10) - 4100 - 2048, 1024, 3072,
      20 << 10, 20 << 10, 20 << 10, 20 << 10, 0, 333};

  @TempDir
  File dir;

  private ReaderFixture f;
  private Output out;
  private IndexCache cache;
  private final ReaderStats stats = new ReaderStats();

  @BeforeEach
  void setUp() throws Exception {
    f = new ReaderFixture(dir, MAX_READ, REGION);
    out = f.register(0, 5, SIZES, 7);
    assertEquals(REGION - 2048, out.offset(4));
    assertTrue(out.offset(5) < REGION && out.offset(6) > REGION);
    cache = new IndexCache(1 << 20, stats);
    f.fetch(cache, stats, List.of(block(out, 11, 12))); // load the index
    f.channel.batches.clear();
    stats.dataReads.set(0);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private FetchOutcomes fetch(int[]... ranges) throws Exception {
    List<BlockFetch.Block> blocks = new java.util.ArrayList<>();
    for (int[] r : ranges) {
      blocks.add(block(out, r[0], r[1]));
    }
    FetchOutcomes o = f.fetch(cache, stats, blocks);
    assertTrue(o.failures.isEmpty(), o.failures.toString());
    for (int[] r : ranges) {
      assertArrayEquals(out.bytes(r[0], r[1]), o.bytes.get(id(out, r[0], r[1])),
          "block " + r[0] + "-" + r[1]);
    }
    assertEquals(1, f.channel.batches.size(), "one batch: a cached fetch is one round trip");
    return o;
  }

  private int[] readLengths() {
    return f.channel.batches.get(0);
  }

  /**
   * Which reads' successes may run on the verbs completion thread: final in-memory
   * deliveries (a block, a run of blocks) only; not index loads (they post the data READs),
   * not pieces of a block that crosses a region, not with checksum verification, not blocks
   * fetched to disk.
   */
  @Test
  void onlyFinalInMemoryDeliveriesMayRunOnTheCompletionThread() throws Exception {
    f.channel.onCompletionThread.clear();
    // Fresh cache: the index READ first, then the data: a run (0-2), a block (11), and 5,
    // which crosses into region 1 (two pieces).
    f.fetch(new IndexCache(1 << 20, stats), stats, List.of(block(out, 0, 1), block(out, 1, 2),
        block(out, 11, 12), block(out, 5, 6)));
    assertEquals(2, f.channel.onCompletionThread.size());
    assertArrayEquals(new boolean[] {false}, f.channel.onCompletionThread.get(0), "index");
    boolean[] data = f.channel.onCompletionThread.get(1);
    int[] lengths = f.channel.batches.get(f.channel.batches.size() - 1);
    assertEquals(4, data.length, "the run 0-2, block 11 and 5's two pieces");
    for (int i = 0; i < data.length; i++) {
      // 0-2 is 2000 bytes, 11 is 333; 5's pieces are 2048 and 1024 bytes.
      boolean piece = lengths[i] == 2048 || lengths[i] == 1024;
      assertEquals(!piece, data[i], "read of " + lengths[i] + " bytes");
    }
    f.channel.onCompletionThread.clear();
    f.fetch(new IndexCache(1 << 20, stats, true), stats, List.of(block(out, 11, 12)));
    assertArrayEquals(new boolean[] {false}, f.channel.onCompletionThread.get(1),
        "with checksum verification");
  }

  @Test
  void adjacentBlocksAreOneReadSlicedPerBlock() throws Exception {
    // Listed out of order: grouping is by file offset, not by request order.
    fetch(new int[] {2, 3}, new int[] {0, 1}, new int[] {1, 2});
    assertArrayEquals(new int[] {700 + 1300 + 2100}, readLengths());
    assertEquals(1, stats.dataReads.get());
    assertEquals(3, stats.coalescedBlocks.get());
    assertEquals(3, stats.remoteBlocks.get() - 1);
  }

  @Test
  void nonAdjacentBlocksAreReadSeparately() throws Exception {
    fetch(new int[] {0, 1}, new int[] {2, 3}, new int[] {11, 12});
    assertArrayEquals(new int[] {700, 2100, 333}, readLengths());
    assertEquals(0, stats.coalescedBlocks.get());
  }

  @Test
  void aRunStopsAtARegionBoundary() throws Exception {
    // 4 ends in region 0; 5 crosses into region 1: 4 alone, 5 in two pieces.
    fetch(new int[] {4, 5}, new int[] {5, 6});
    assertArrayEquals(new int[] {1024, 1024, 2048}, readLengths());
    assertEquals(0, stats.coalescedBlocks.get());
  }

  @Test
  void aRunStopsAtTheLongestRead() throws Exception {
    fetch(new int[] {6, 7}, new int[] {7, 8}, new int[] {8, 9}, new int[] {9, 10},
        new int[] {10, 11});
    // Three of 20 KiB fit 64 KiB, the fourth is read alone; the empty one needs no READ.
    assertArrayEquals(new int[] {60 << 10, 20 << 10}, readLengths());
    for (int len : readLengths()) {
      assertTrue(len <= MAX_READ);
    }
    assertEquals(3, stats.coalescedBlocks.get());
  }

  @Test
  void aFailedCoalescedReadFailsEveryBlockOfItsRun() throws Exception {
    f.server.deregister(out.regions.get(0)).get();
    List<BlockFetch.Block> blocks = List.of(block(out, 0, 1), block(out, 1, 2), block(out, 6, 7));
    FetchOutcomes o = f.fetch(cache, stats, blocks);
    assertEquals(2, o.failures.size(), o.failures.keySet().toString());
    assertArrayEquals(out.bytes(6, 7), o.bytes.get(id(out, 6, 7)));
  }
}
