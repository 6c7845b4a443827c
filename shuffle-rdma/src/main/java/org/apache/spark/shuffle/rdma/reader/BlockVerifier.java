/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.nio.ByteBuffer;
import java.util.zip.Checksum;

/**
 * Checks the bytes of one block, fed in order in any number of pieces, against the checksum
 * Spark's writer stored for each partition the block covers (a batch block covers several:
 * each partition is checked on its own, since that is what the writer checksummed). Empty
 * partitions hold no bytes and are not checked. Not thread-safe: one block, fed in order.
 */
final class BlockVerifier {
  private final OutputIndex index;
  private final int endReduce;
  private final Checksum checksum;
  private int partition;
  private long left;
  private long bytes;
  private String mismatch;

  BlockVerifier(OutputIndex index, int startReduce, int endReduce) {
    this.index = index;
    this.endReduce = endReduce;
    this.checksum = index.algorithm.create();
    this.partition = startReduce;
    next();
  }

  /** Feeds the next bytes of the block (not consumed from {@code src}). */
  void update(ByteBuffer src) {
    ByteBuffer b = src.duplicate();
    while (b.hasRemaining()) {
      if (partition >= endReduce) {
        throw new IllegalStateException(b.remaining() + " bytes past the end of the block");
      }
      int n = (int) Math.min(b.remaining(), left);
      ByteBuffer part = b.duplicate();
      part.limit(part.position() + n);
      checksum.update(part);
      b.position(b.position() + n);
      bytes += n;
      left -= n;
      if (left == 0) {
        check();
        partition++;
        next();
      }
    }
  }

  /** Null when every partition of the block matched; else what differed (the first one). */
  String finish() {
    if (partition < endReduce && mismatch == null) {
      return "partition " + partition + " ended " + left + " bytes early";
    }
    return mismatch;
  }

  /** Bytes fed so far. */
  long bytes() {
    return bytes;
  }

  private void check() {
    long got = checksum.getValue();
    long stored = index.checksums[partition];
    if (got != stored && mismatch == null) {
      long size = index.offsets[partition + 1] - index.offsets[partition];
      mismatch = "reduce partition " + partition + ": " + index.algorithm + " of its " + size
          + " bytes is 0x" + Long.toHexString(got) + ", the writer stored 0x"
          + Long.toHexString(stored);
    }
  }

  /** Moves to the next partition that holds bytes, from {@code partition}. */
  private void next() {
    while (partition < endReduce
        && index.offsets[partition + 1] == index.offsets[partition]) {
      partition++;
    }
    if (partition < endReduce) {
      left = index.offsets[partition + 1] - index.offsets[partition];
      checksum.reset();
    }
  }
}
