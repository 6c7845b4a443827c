/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * How the bytes [start, end) of a data file, registered as consecutive regions of
 * {@code regionSize} bytes, are read as one-sided reads: no read crosses a region boundary
 * (each region has its own key) and none is longer than what the channel can take at once
 * ({@code maxRead}: a fraction of the receive pool on verbs, a frame limit on tcp). Pieces
 * come in file order and cover the range exactly once. Pure arithmetic, no I/O.
 */
public final class PiecePlan {

  /** Largest block Spark can hold in memory (its own limit for a fetched block). */
  public static final long MAX_IN_MEMORY = Integer.MAX_VALUE - 512;

  /** One read: {@code length} bytes at {@code offsetInRegion} of data region {@code region}. */
  public static final class Piece {
    public final int index;
    public final int region;
    public final long offsetInRegion;
    public final int length;
    /** Where the piece's first byte goes in the block (a block may exceed 2 GiB on disk). */
    public final long offsetInBlock;

    Piece(int index, int region, long offsetInRegion, int length, long offsetInBlock) {
      this.index = index;
      this.region = region;
      this.offsetInRegion = offsetInRegion;
      this.length = length;
      this.offsetInBlock = offsetInBlock;
    }

    @Override
    public String toString() {
      return "piece " + index + " (region " + region + " +" + offsetInRegion + ", " + length
          + " bytes, at " + offsetInBlock + " in the block)";
    }
  }

  private PiecePlan() {}

  /**
   * The pieces of [start, end) in order; empty when the range is empty.
   *
   * @throws IllegalArgumentException for a negative or inverted range or non-positive sizes
   */
  public static List<Piece> plan(long start, long end, long regionSize, int maxRead) {
    if (start < 0 || end < start) {
      throw new IllegalArgumentException("bad range [" + start + ", " + end + ")");
    }
    if (regionSize <= 0 || maxRead <= 0) {
      throw new IllegalArgumentException("region size and read size must be positive: "
          + regionSize + ", " + maxRead);
    }
    if (start == end) {
      return Collections.emptyList();
    }
    int count = count(start, end, regionSize, maxRead);
    if (count == 1) {
      // The common case (a block in one READ): no list of its own, one object less per block.
      int region = (int) (start / regionSize);
      return Collections.singletonList(new Piece(0, region, start - region * regionSize,
          (int) (end - start), 0));
    }
    List<Piece> pieces = new ArrayList<>(count);
    long at = start;
    while (at < end) {
      int region = (int) (at / regionSize);
      long regionEnd = (region + 1L) * regionSize;
      long to = Math.min(Math.min(end, regionEnd), at + maxRead);
      pieces.add(new Piece(pieces.size(), region, at - region * regionSize, (int) (to - at),
          at - start));
      at = to;
    }
    return pieces;
  }

  /** How many pieces {@link #plan} yields, without building them. */
  static int count(long start, long end, long regionSize, int maxRead) {
    long n = 0;
    long at = start;
    while (at < end) {
      long regionEnd = (at / regionSize + 1) * regionSize;
      long inRegion = Math.min(end, regionEnd) - at;
      n += (inRegion + maxRead - 1) / maxRead;
      at = Math.min(end, regionEnd);
    }
    if (n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("range of " + (end - start) + " bytes needs " + n
          + " reads");
    }
    return (int) n;
  }

  /**
   * Null when a block of {@code length} bytes may be assembled in memory, else why not. Spark
   * sends every request above spark.network.maxRemoteBlockSizeFetchToMem (which it keeps
   * below 2 GiB) to disk, so this refuses only what Spark itself could not hold.
   */
  public static String inMemoryProblem(long length) {
    if (length > MAX_IN_MEMORY) {
      return "a block of " + length + " bytes cannot be held in memory (at most "
          + MAX_IN_MEMORY + "); Spark fetches such blocks to disk when they exceed "
          + "spark.network.maxRemoteBlockSizeFetchToMem";
    }
    return null;
  }
}
