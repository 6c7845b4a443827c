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
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NettyManagedBuffer;
import org.apache.spark.shuffle.rdma.reader.ReaderFixture.Output;
import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tcp answer that arrived in several socket reads is a composite Netty buffer. Blocks cut
 * from it must be views (Spark's fetcher streams them with no copy), hold the answer exactly
 * as long as Spark holds a block, and pieces of a large block must land once, at their place.
 * The real tcp transport serves the reads; every answer is then handed on as a composite of
 * two parts, as a frame decoder builds it.
 */
class NettyAnswerViewTest {
  private static final int MAX_READ = 64 << 10;
  /** 0..2 small and adjacent (one READ); 3 is 150 KiB (three pieces of at most 64 KiB). */
  private static final int[] SIZES = {700, 1300, 2100, 150 << 10};

  @TempDir
  File dir;

  private ReaderFixture f;
  private Output out;
  private IndexCache cache;
  private final ReaderStats stats = new ReaderStats();
  private final List<CompositeByteBuf> answers = new CopyOnWriteArrayList<>();
  /** Answers whose callback has returned (and released the channel's reference). */
  private final AtomicInteger answered = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    f = new ReaderFixture(dir, MAX_READ, 1 << 20);
    out = f.register(0, 5, SIZES, 11);
    cache = new IndexCache(1 << 20, stats);
    f.fetch(cache, stats, List.of(block(out, 0, 1))); // load the index
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  @Test
  void coalescedBlocksAreViewsOfTheAnswerHeldAsLongAsSparkHoldsThem() throws Exception {
    FetchOutcomes held = fetch(List.of(block(out, 0, 1), block(out, 1, 2), block(out, 2, 3)));
    assertEquals(1, answers.size(), "one READ for the three adjacent blocks");
    assertEquals(3, stats.coalescedBlocks.get());
    CompositeByteBuf answer = answers.get(0);
    assertEquals(2, answer.numComponents());
    // Change the answer's bytes before Spark reads the blocks (once, as Spark's stream of a
    // Netty buffer can be read): a view shows the change, a copy would not.
    for (int i = 0; i < answer.capacity(); i++) {
      answer.setByte(i, ~answer.getByte(i));
    }
    for (int p = 0; p < 3; p++) {
      byte[] flipped = out.bytes(p, p + 1);
      for (int i = 0; i < flipped.length; i++) {
        flipped[i] = (byte) ~flipped[i];
      }
      assertArrayEquals(flipped, streamed(held, id(out, p, p + 1)), "block " + p + " is a copy");
    }
    // The answer lives while Spark holds any block of it, and no longer.
    answer.release(); // the test's own reference
    release(held, id(out, 0, 1));
    release(held, id(out, 2, 3));
    assertTrue(answer.refCnt() > 0, "released while block 1 is held");
    release(held, id(out, 1, 2));
    assertEquals(0, answer.refCnt(), "leaked");
  }

  @Test
  void piecesOfALargeBlockLandOnceAtTheirPlace() throws Exception {
    FetchOutcomes held = fetch(List.of(block(out, 3, 4)));
    assertEquals(3, answers.size(), "150 KiB in pieces of at most 64 KiB");
    assertArrayEquals(out.bytes(3, 4), streamed(held, id(out, 3, 4)));
    release(held, id(out, 3, 4));
    for (CompositeByteBuf a : answers) {
      a.release();
      assertEquals(0, a.refCnt(), "an assembled piece's answer leaked");
    }
  }

  /** Fetches with answers turned into two-part composites; blocks stay retained, as in Spark. */
  private FetchOutcomes fetch(List<BlockFetch.Block> blocks) throws Exception {
    FetchOutcomes o = FetchOutcomes.retaining(blocks.size());
    new BlockFetch(blocks, new CompositeAnswers(f.channel), o, null, f.transportConf, stats,
        cache).start();
    o.all.get(30, TimeUnit.SECONDS);
    assertTrue(o.failures.isEmpty(), o.failures.toString());
    // The last block is handed to Spark inside the last callback, before the channel's
    // release after it: wait for that, or the reference counts below would race it.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (answered.get() < answers.size() && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertEquals(answers.size(), answered.get(), "callbacks still running");
    return o;
  }

  /** Reads a held block through Spark's stream, as the shuffle reader does (once). */
  private static byte[] streamed(FetchOutcomes o, String blockId) throws IOException {
    try (InputStream in = o.held.get(blockId).createInputStream()) {
      return in.readAllBytes();
    }
  }

  private static void release(FetchOutcomes o, String blockId) {
    o.held.remove(blockId).release();
  }

  /**
   * The real channel, each successful answer handed on as a composite of two copies of its
   * halves (the test keeps a reference to each) and released after the callback, as the tcp
   * channel does.
   */
  private final class CompositeAnswers extends ForwardingChannel {
    CompositeAnswers(TransportChannel real) {
      super(real);
    }

    @Override
    public void read(List<ReadRequest> batch) {
      List<ReadRequest> wrapped = new ArrayList<>(batch.size());
      for (ReadRequest r : batch) {
        ReadCallback target = r.callback();
        wrapped.add(new ReadRequest(r.remoteAddress(), r.key(), r.length(), new ReadCallback() {
          @Override
          public void onSuccess(ReadRequest request, ManagedBuffer data) {
            byte[] bytes;
            try {
              bytes = ReadResult.bytesOf(data);
            } catch (IOException e) {
              target.onFailure(r, e);
              return;
            }
            int half = bytes.length / 2;
            CompositeByteBuf c = Unpooled.compositeBuffer();
            c.addComponent(true, Unpooled.wrappedBuffer(bytes, 0, half));
            c.addComponent(true, Unpooled.wrappedBuffer(bytes, half, bytes.length - half));
            answers.add(c.retain());
            ManagedBuffer answer = new NettyManagedBuffer(c);
            try {
              target.onSuccess(r, answer);
            } finally {
              answer.release();
              answered.incrementAndGet();
            }
          }

          @Override
          public void onFailure(ReadRequest request, Throwable cause) {
            target.onFailure(r, cause);
          }
        }, r.attachment()));
      }
      real.read(wrapped);
    }
  }
}
