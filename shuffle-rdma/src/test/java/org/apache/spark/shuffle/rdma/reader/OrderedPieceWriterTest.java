/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.NettyManagedBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OrderedPieceWriterTest {
  @TempDir
  File dir;

  @Test
  void piecesArrivingInAnyOrderLandInBlockOrderInTheFile() throws Exception {
    Random rnd = new Random(3);
    byte[] block = new byte[200_000];
    rnd.nextBytes(block);
    List<PiecePlan.Piece> plan = PiecePlan.plan(0, block.length, 1 << 20, 7000);
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < plan.size(); i++) {
      order.add(i);
    }
    Collections.shuffle(order, rnd);
    File f = new File(dir, "block");
    List<ByteBuf> bufs = new ArrayList<>();
    int maxHeld = 0;
    try (FileChannel out = FileChannel.open(f.toPath(), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      OrderedPieceWriter w = new OrderedPieceWriter(out, plan.size());
      for (int k = 0; k < order.size(); k++) {
        PiecePlan.Piece p = plan.get(order.get(k));
        ByteBuf buf = Unpooled.copiedBuffer(block, (int) p.offsetInBlock, p.length);
        bufs.add(buf);
        boolean done = w.accept(p.index, new NettyManagedBuffer(buf));
        buf.release(); // the transport's own reference ends with the callback
        maxHeld = Math.max(maxHeld, w.held());
        assertEquals(k == order.size() - 1, done);
      }
      assertEquals(block.length, w.written());
      assertEquals(0, w.held());
    }
    assertArrayEquals(block, Files.readAllBytes(f.toPath()));
    assertTrue(maxHeld > 0, "the shuffled order never held a piece: the test proves nothing");
    for (ByteBuf b : bufs) {
      assertEquals(0, b.refCnt(), "a kept piece was not released after writing");
    }
  }

  @Test
  void abortReleasesKeptPiecesAndStopsWriting() throws Exception {
    File f = new File(dir, "aborted");
    try (FileChannel out = FileChannel.open(f.toPath(), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      OrderedPieceWriter w = new OrderedPieceWriter(out, 3);
      ByteBuf later = Unpooled.wrappedBuffer(new byte[] {3, 3});
      assertFalse(w.accept(2, new NettyManagedBuffer(later)));
      assertEquals(2, later.refCnt(), "an early piece must be retained");
      w.abort();
      assertEquals(1, later.refCnt(), "abort must release the kept piece");
      assertFalse(w.accept(0, new NettyManagedBuffer(Unpooled.wrappedBuffer(new byte[] {1}))));
      assertEquals(0, w.written());
    }
    assertEquals(0, f.length());
  }

  @Test
  void duplicateOrOutOfRangePieceIsAnError() throws Exception {
    File f = new File(dir, "dup");
    try (FileChannel out = FileChannel.open(f.toPath(), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      OrderedPieceWriter w = new OrderedPieceWriter(out, 2);
      w.accept(0, new NettyManagedBuffer(Unpooled.wrappedBuffer(ByteBuffer.allocate(4))));
      assertThrows(IllegalStateException.class, () ->
          w.accept(0, new NettyManagedBuffer(Unpooled.wrappedBuffer(ByteBuffer.allocate(4)))));
      assertThrows(IllegalStateException.class, () ->
          w.accept(2, new NettyManagedBuffer(Unpooled.wrappedBuffer(ByteBuffer.allocate(4)))));
    }
  }
}
