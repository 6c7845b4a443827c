/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.apache.spark.shuffle.rdma.reader.ReaderFixture.block;
import static org.apache.spark.shuffle.rdma.reader.ReaderFixture.id;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.reader.ReaderFixture.Output;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reducer's index cache over the real tcp transport: an output's index is read once per
 * executor, later blocks are one READ each and a fully cached fetch one round trip; LRU
 * eviction by bytes; a re-registered output never meets old offsets; concurrent fetches
 * share one load; a failed load fails only its output's blocks and is not kept.
 */
class IndexCacheTest {
  private static final int PARTITIONS = 8;
  private static final int[] SIZES = {1000, 10, 3000, 200, 5000, 70, 900, 4000};
  /** What one entry of a PARTITIONS-partition output weighs. */
  private static final long ENTRY = 8L * (PARTITIONS + 1) + IndexCache.ENTRY_OVERHEAD;

  @TempDir
  File dir;

  private ReaderFixture f;
  private final ReaderStats stats = new ReaderStats();

  @BeforeEach
  void setUp() throws Exception {
    f = new ReaderFixture(dir, 64 << 10, 1 << 20);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private static void assertBlocks(FetchOutcomes out, Output o, int[]... ranges) {
    assertTrue(out.failures.isEmpty(), out.failures.toString());
    for (int[] r : ranges) {
      assertArrayEquals(o.bytes(r[0], r[1]), out.bytes.get(id(o, r[0], r[1])),
          id(o, r[0], r[1]));
    }
  }

  /** Partitions 0, 2, 4 and 6 of each output: non-adjacent, so one data READ per block. */
  private List<BlockFetch.Block> spread(Output... outputs) {
    List<BlockFetch.Block> blocks = new ArrayList<>();
    for (Output o : outputs) {
      for (int p = 0; p < PARTITIONS; p += 2) {
        blocks.add(block(o, p, p + 1));
      }
    }
    return blocks;
  }

  @Test
  void anOutputsIndexIsReadOnceThenEveryBlockIsOneReadAndOneRoundTrip() throws Exception {
    IndexCache cache = new IndexCache(1 << 20, stats);
    Output a = f.register(0, 11, SIZES, 1);
    Output b = f.register(0, 12, SIZES, 2);
    FetchOutcomes first = f.fetch(cache, stats, List.of(block(a, 0, 1), block(b, 2, 3)));
    assertBlocks(first, a, new int[] {0, 1});
    assertBlocks(first, b, new int[] {2, 3});
    assertEquals(2, stats.indexReads.get(), "one index READ per output");
    assertEquals(2, stats.dataReads.get());
    assertEquals(2, stats.roundTrips.get(), "index round, then data round");
    assertEquals(0, stats.cachedFetches.get());
    // The index READ is the whole index.
    assertArrayEquals(new int[] {8 * (PARTITIONS + 1), 8 * (PARTITIONS + 1)},
        f.channel.batches.get(0));

    FetchOutcomes later = f.fetch(cache, stats, spread(a, b));
    for (int p = 0; p < PARTITIONS; p += 2) {
      assertBlocks(later, a, new int[] {p, p + 1});
      assertBlocks(later, b, new int[] {p, p + 1});
    }
    assertEquals(2, stats.indexReads.get(), "cached: no more index READs");
    // Partitions 0, 2, 4, 6 of two outputs: 8 blocks, none adjacent.
    assertEquals(2 + 8, stats.dataReads.get(), "one READ per block");
    assertEquals(1, stats.cachedFetches.get());
    assertEquals(1, stats.cachedFetchRoundTrips.get(), "a cached fetch is one round trip");
    assertEquals(3, f.channel.batches.size(), "index batch, data batch, data batch");
    assertEquals(2 * ENTRY, cache.bytes());
  }

  @Test
  void leastRecentlyUsedOutputsAreEvictedPastTheByteBound() throws Exception {
    IndexCache cache = new IndexCache(2 * ENTRY, stats);
    Output a = f.register(0, 21, SIZES, 1);
    Output b = f.register(0, 22, SIZES, 2);
    Output c = f.register(0, 23, SIZES, 3);
    f.fetch(cache, stats, List.of(block(a, 0, 1)));
    f.fetch(cache, stats, List.of(block(b, 0, 1)));
    f.fetch(cache, stats, List.of(block(a, 2, 3))); // a is now more recent than b
    assertEquals(2, stats.indexReads.get());
    f.fetch(cache, stats, List.of(block(c, 0, 1))); // over the bound: b goes
    assertEquals(3, stats.indexReads.get());
    assertEquals(1, stats.indexCacheEvictions.get());
    assertEquals(2 * ENTRY, cache.bytes());
    assertEquals(2 * ENTRY, stats.indexCacheBytes.get());

    assertBlocks(f.fetch(cache, stats, List.of(block(a, 4, 5))), a, new int[] {4, 5});
    assertEquals(3, stats.indexReads.get(), "a, recently used, stayed");
    assertBlocks(f.fetch(cache, stats, List.of(block(b, 4, 5))), b, new int[] {4, 5});
    assertEquals(4, stats.indexReads.get(), "b was evicted and is read again");
  }

  @Test
  void aReRegisteredOutputNeverReadsWithTheOldOffsets() throws Exception {
    IndexCache cache = new IndexCache(1 << 20, stats);
    Output old = f.register(3, 31, SIZES, 1);
    assertBlocks(f.fetch(cache, stats, spread(old)), old, new int[] {2, 3});
    // The same map id recomputed and registered again (same shuffle, same executor) with
    // different partition sizes: the old registration is revoked, its files replaced.
    f.deregister(old);
    int[] resized = {4000, 10, 1, 2500, 7, 0, 3333, 64};
    Output again = f.register(3, 31, resized, 9);
    List<BlockFetch.Block> all = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      all.add(block(again, p, p + 1));
    }
    FetchOutcomes out = f.fetch(cache, stats, all);
    for (int p = 0; p < PARTITIONS; p++) {
      assertBlocks(out, again, new int[] {p, p + 1});
    }
    assertEquals(2, stats.indexReads.get(), "the new registration's index was read");
    cache.forget(3);
    assertEquals(0, cache.size());
    assertEquals(0, cache.bytes());
  }

  @Test
  void concurrentFetchesOfOneOutputShareOneIndexRead() throws Exception {
    IndexCache cache = new IndexCache(1 << 20, stats);
    Output a = f.register(0, 41, SIZES, 1);
    // Hold the index READ so that every fetch starts while the load is in flight.
    long indexAddress = a.descriptor.indexAddress();
    f.channel.holdWhere(r -> r.remoteAddress() == indexAddress);
    List<FetchOutcomes> outs = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int p = 2 * t;
      FetchOutcomes out = new FetchOutcomes(1);
      outs.add(out);
      threads.add(new Thread(() -> new BlockFetch(List.of(block(a, p, p + 1)), f.channel, out,
          null, f.transportConf, stats, cache).start()));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(10_000);
    }
    assertEquals(1, stats.indexReads.get(), "one load for four fetches");
    assertFalse(outs.get(0).all.isDone());
    f.channel.releaseHeld();
    for (int t = 0; t < 4; t++) {
      outs.get(t).all.get(30, TimeUnit.SECONDS);
      assertBlocks(outs.get(t), a, new int[] {2 * t, 2 * t + 1});
    }
    assertEquals(4, stats.dataReads.get());
    assertEquals(8, stats.roundTrips.get(), "each waited for the index, then read");
  }

  @Test
  void aFailedIndexReadFailsOnlyThatOutputsBlocksAndIsNotCached() throws Exception {
    IndexCache cache = new IndexCache(1 << 20, stats);
    Output good = f.register(0, 51, SIZES, 1);
    Output lost = f.register(0, 52, SIZES, 2);
    f.server.deregister(lost.index).get(10, TimeUnit.SECONDS);
    FetchOutcomes out = f.fetch(cache, stats, spread(good, lost));
    assertEquals(4, out.failures.size(), out.failures.keySet().toString());
    for (int p = 0; p < PARTITIONS; p += 2) {
      assertTrue(out.failures.containsKey(id(lost, p, p + 1)));
      assertArrayEquals(good.bytes(p, p + 1), out.bytes.get(id(good, p, p + 1)));
    }
    assertTrue(out.failures.get(id(lost, 0, 1)).getMessage().contains("key"),
        out.failures.get(id(lost, 0, 1)).toString());
    assertEquals(4, stats.blockReadFailures.get());
    assertEquals(1, cache.size(), "only the good output's index is kept");
    assertEquals(2, stats.indexReads.get());
    // The next fetch of the lost output reads its index again (and fails again).
    FetchOutcomes again = f.fetch(cache, stats, List.of(block(lost, 0, 1)));
    assertEquals(1, again.failures.size());
    assertEquals(3, stats.indexReads.get(), "a failed load was not cached");
  }

  @Test
  void indexesLongerThanOneReadAreReadInPieces() throws Exception {
    IndexCache cache = new IndexCache(1 << 20, stats);
    int[] sizes = new int[10_000]; // 80,008 bytes of index, two READs of at most 64 KiB
    Arrays.fill(sizes, 3);
    sizes[9_999] = 1234;
    Output big = f.register(0, 61, sizes, 1);
    FetchOutcomes out = f.fetch(cache, stats, List.of(block(big, 9_999, 10_000), block(big, 0, 1)));
    assertBlocks(out, big, new int[] {9_999, 10_000}, new int[] {0, 1});
    assertEquals(2, stats.indexReads.get());
    assertArrayEquals(new int[] {64 << 10, 80_008 - (64 << 10)}, f.channel.batches.get(0));
  }
}
