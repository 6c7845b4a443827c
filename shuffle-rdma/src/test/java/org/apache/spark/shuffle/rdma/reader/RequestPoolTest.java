/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spare requests of one-READ blocks (issue 28): bounded, cleared when given back, and
 * given back by every one-READ block's completion, success or failure, over the real tcp
 * transport, so that fetches after the first make no request objects.
 */
class RequestPoolTest {
  private static final int MAX_READ = 64 << 10;
  private static final long REGION = 64 << 10;
  /** Eight small partitions: each block one READ. */
  private static final int[] SIZES = {100, 200, 300, 400, 500, 600, 700, 800};

  @TempDir
  File dir;

  private ReaderFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new ReaderFixture(dir, MAX_READ, REGION);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private static final ReadCallback NOTHING = new ReadCallback() {
    @Override
    public void onSuccess(ReadRequest request, ManagedBuffer data) {}

    @Override
    public void onFailure(ReadRequest request, Throwable cause) {}
  };

  @Test
  void sparesAreClearedReusedAndBounded() {
    RequestPool pool = new RequestPool(2);
    ReadRequest a = pool.take().reset(8, 1, 16, NOTHING, "a");
    ReadRequest b = pool.take().reset(8, 1, 16, NOTHING, "b");
    ReadRequest c = pool.take().reset(8, 1, 16, NOTHING, "c");
    assertNotSame(a, b);
    pool.give(a);
    pool.give(b);
    pool.give(c); // over the bound: dropped
    assertEquals(2, pool.spares());
    assertNull(b.attachment());
    assertNull(b.callback());
    assertSame(b, pool.take());
    assertSame(a, pool.take());
    assertEquals(0, pool.spares());
  }


  private FetchOutcomes fetch(IndexCache cache, ReaderStats stats, RequestPool pool,
      List<BlockFetch.Block> blocks) throws Exception {
    FetchOutcomes out = new FetchOutcomes(blocks.size());
    new BlockFetch(blocks, f.channel, out, null, f.transportConf, stats, cache,
        DownloadWriters.shared(), pool).start();
    out.all.get(30, TimeUnit.SECONDS);
    return out;
  }

  /** The pool gives requests back after the listener ran: wait for the last one. */
  private static void awaitSpares(RequestPool pool, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pool.spares() != n && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(n, pool.spares());
  }

  @Test
  void everyOneReadBlockGivesItsRequestBackOnSuccessAndOnFailure() throws Exception {
    ReaderFixture.Output o = f.register(0, 3, SIZES, 9);
    ReaderStats stats = new ReaderStats();
    IndexCache cache = new IndexCache(1 << 20, stats);
    RequestPool pool = new RequestPool();
    // Blocks 0..7 of one output, each its own READ (one per block: separate fetches of
    // alternate partitions, so none is adjacent to another in its fetch).
    for (int round = 0; round < 3; round++) {
      List<BlockFetch.Block> even = new ArrayList<>();
      for (int p = round % 2; p < SIZES.length; p += 2) {
        even.add(ReaderFixture.block(o, p, p + 1));
      }
      FetchOutcomes out = fetch(cache, stats, pool, even);
      assertTrue(out.failures.isEmpty(), out.failures.toString());
      for (BlockFetch.Block b : even) {
        assertArrayEquals(o.bytes(b.startReduce, b.endReduce), out.bytes.get(b.blockId),
            b.blockId);
      }
      awaitSpares(pool, 4); // the same four requests, fetch after fetch
    }
    assertEquals(0, stats.coalescedBlocks.get());
    // Revoked: the READs fail, and their requests come back all the same.
    f.deregister(o);
    List<BlockFetch.Block> gone = new ArrayList<>();
    for (int p = 0; p < SIZES.length; p += 2) {
      gone.add(ReaderFixture.block(o, p, p + 1));
    }
    FetchOutcomes out = fetch(cache, stats, pool, gone);
    assertEquals(4, out.failures.size(), out.bytes.keySet().toString());
    awaitSpares(pool, 4);
  }
}
