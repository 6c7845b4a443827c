/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;

import org.apache.spark.shuffle.rdma.transport.verbs.VerbsSizing;
import org.junit.jupiter.api.Test;

class PiecePlanTest {
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;

  /** Every plan must tile [start, end) in order, inside regions, within maxRead. */
  private static void checkTiles(List<PiecePlan.Piece> ps, long start, long end, long region,
      int maxRead) {
    long at = start;
    for (int i = 0; i < ps.size(); i++) {
      PiecePlan.Piece p = ps.get(i);
      assertEquals(i, p.index);
      assertEquals(at - start, p.offsetInBlock, p.toString());
      assertEquals(at, p.region * region + p.offsetInRegion, p.toString());
      assertTrue(p.length > 0 && p.length <= maxRead, p.toString());
      assertTrue(p.offsetInRegion + p.length <= region, "crosses a region: " + p);
      at += p.length;
    }
    assertEquals(end, at, "pieces must cover the range exactly");
    assertEquals(ps.size(), PiecePlan.count(start, end, region, maxRead));
  }

  @Test
  void smallBlockIsOnePiece() {
    List<PiecePlan.Piece> ps = PiecePlan.plan(100, 5000, GIB, 32 << 20);
    assertEquals(1, ps.size());
    assertEquals(0, ps.get(0).region);
    assertEquals(100, ps.get(0).offsetInRegion);
    assertEquals(4900, ps.get(0).length);
  }

  @Test
  void blockLargerThanThePoolIsSplitIntoMaxReadPieces() {
    // The default verbs pool: 128 MiB, so pieces of 32 MiB; a 300 MiB skewed block.
    int maxRead = VerbsSizing.maxReadLength(128 * MIB, 32 * MIB);
    assertEquals(32 * MIB, maxRead);
    long start = 7;
    long end = start + 300 * MIB;
    List<PiecePlan.Piece> ps = PiecePlan.plan(start, end, GIB, maxRead);
    assertEquals(10, ps.size()); // 9 x 32 MiB + 12 MiB
    checkTiles(ps, start, end, GIB, maxRead);
    assertEquals(12 * MIB, ps.get(9).length);
  }

  @Test
  void blockCrossingRegionBoundariesSplitsAtEachBoundary() {
    long region = MIB;
    // From 1000 bytes before the end of region 2 to 10 bytes into region 5.
    long start = 3 * region - 1000;
    long end = 5 * region + 10;
    List<PiecePlan.Piece> ps = PiecePlan.plan(start, end, region, 1 << 30);
    assertEquals(4, ps.size());
    assertEquals(2, ps.get(0).region);
    assertEquals(1000, ps.get(0).length);
    assertEquals(3, ps.get(1).region);
    assertEquals(0, ps.get(1).offsetInRegion);
    assertEquals(MIB, ps.get(1).length);
    assertEquals(5, ps.get(3).region);
    assertEquals(10, ps.get(3).length);
    checkTiles(ps, start, end, region, 1 << 30);
  }

  @Test
  void exactBoundaries() {
    long region = MIB;
    int maxRead = 256 << 10;
    // Exactly one region, exactly four reads.
    List<PiecePlan.Piece> ps = PiecePlan.plan(region, 2 * region, region, maxRead);
    assertEquals(4, ps.size());
    checkTiles(ps, region, 2 * region, region, maxRead);
    // Exactly one read long, ending on a region boundary.
    ps = PiecePlan.plan(region - maxRead, region, region, maxRead);
    assertEquals(1, ps.size());
    assertEquals(0, ps.get(0).region);
    // One byte more than a read: a second piece of one byte.
    ps = PiecePlan.plan(0, maxRead + 1, region, maxRead);
    assertEquals(2, ps.size());
    assertEquals(1, ps.get(1).length);
    // One byte across a boundary: two one-byte pieces in two regions.
    ps = PiecePlan.plan(region - 1, region + 1, region, maxRead);
    assertEquals(2, ps.size());
    assertEquals(0, ps.get(0).region);
    assertEquals(1, ps.get(1).region);
    assertEquals(0, ps.get(1).offsetInRegion);
    // Empty block: no read at all.
    assertTrue(PiecePlan.plan(5, 5, region, maxRead).isEmpty());
  }

  @Test
  void blockOverTwoGibIsPlannedWithLongOffsetsForDisk() {
    long start = GIB - 3;
    long end = start + 5 * GIB + 12345; // 5 GiB: over 2 GiB, across six regions
    int maxRead = 32 << 20;
    List<PiecePlan.Piece> ps = PiecePlan.plan(start, end, GIB, maxRead);
    checkTiles(ps, start, end, GIB, maxRead);
    PiecePlan.Piece last = ps.get(ps.size() - 1);
    assertEquals(end - start, last.offsetInBlock + last.length);
    assertTrue(last.offsetInBlock > Integer.MAX_VALUE);
    assertEquals(6, last.region);
    // It may stream to disk, but it cannot be held in memory.
    assertNotNull(PiecePlan.inMemoryProblem(end - start));
    assertNull(PiecePlan.inMemoryProblem(PiecePlan.MAX_IN_MEMORY));
    assertNotNull(PiecePlan.inMemoryProblem(PiecePlan.MAX_IN_MEMORY + 1));
  }

  @Test
  void randomRangesAlwaysTile() {
    Random rnd = new Random(11);
    for (int i = 0; i < 2000; i++) {
      long region = MIB << rnd.nextInt(4);
      int maxRead = 4096 << rnd.nextInt(10);
      long start = (long) (rnd.nextDouble() * 8 * region);
      long end = start + (long) (rnd.nextDouble() * 5 * region);
      checkTiles(PiecePlan.plan(start, end, region, maxRead), start, end, region, maxRead);
    }
  }

  @Test
  void badInput() {
    assertThrows(IllegalArgumentException.class, () -> PiecePlan.plan(10, 5, MIB, 4096));
    assertThrows(IllegalArgumentException.class, () -> PiecePlan.plan(-1, 5, MIB, 4096));
    assertThrows(IllegalArgumentException.class, () -> PiecePlan.plan(0, 5, MIB, 0));
  }

  @Test
  void verbsReadSizeIsAQuarterOfThePoolAtMostTheKey() {
    assertEquals(1 << 20, VerbsSizing.maxReadLength(4 * MIB, 32 * MIB));
    assertEquals(8 << 20, VerbsSizing.maxReadLength(1 * GIB, 8 * MIB));
    // A key that is no power of two rounds down: the allocator would round the read up.
    assertEquals(4 << 20, VerbsSizing.maxReadLength(1 * GIB, 5 * MIB));
    assertEquals(1 << 18, VerbsSizing.maxReadLength(MIB, 32 * MIB));
  }
}
