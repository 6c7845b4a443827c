/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.checksum;

import java.nio.ByteBuffer;
import java.util.zip.Checksum;

/**
 * Checks the bytes of one block, fed in order in any number of pieces, against the checksum
 * Spark's writer stored for each partition the block covers (a batch block covers several:
 * each partition is checked on its own, since that is what the writer checksummed). Empty
 * partitions hold no bytes and are not checked. Used for blocks read remotely (the reader)
 * and for this executor's own blocks (its registered mappings). Not thread-safe: one block,
 * fed in order.
 */
public final class PartitionVerifier {
  private final long[] offsets;
  private final long[] checksums;
  private final ChecksumAlgorithm algorithm;
  private final int endReduce;
  private final Checksum checksum;
  private int partition;
  private long left;
  private long bytes;
  private String mismatch;

  /**
   * @param offsets the output's partition offsets (numPartitions + 1)
   * @param checksums what the writer stored, one per partition
   */
  public PartitionVerifier(long[] offsets, long[] checksums, ChecksumAlgorithm algorithm,
      int startReduce, int endReduce) {
    this.offsets = offsets;
    this.checksums = checksums;
    this.algorithm = algorithm;
    this.endReduce = endReduce;
    this.checksum = algorithm.create();
    this.partition = startReduce;
    next();
  }

  /** Feeds the next bytes of the block (not consumed from {@code src}). */
  public void update(ByteBuffer src) {
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
  public String finish() {
    if (partition < endReduce && mismatch == null) {
      return "partition " + partition + " ended " + left + " bytes early";
    }
    return mismatch;
  }

  /** Bytes fed so far. */
  public long bytes() {
    return bytes;
  }

  private void check() {
    long got = checksum.getValue();
    long stored = checksums[partition];
    if (got != stored && mismatch == null) {
      long size = offsets[partition + 1] - offsets[partition];
      mismatch = "reduce partition " + partition + ": " + algorithm + " of its " + size
          + " bytes is 0x" + Long.toHexString(got) + ", the writer stored 0x"
          + Long.toHexString(stored);
    }
  }

  /** Moves to the next partition that holds bytes, from {@code partition}. */
  private void next() {
    while (partition < endReduce
        && offsets[partition + 1] == offsets[partition]) {
      partition++;
    }
    if (partition < endReduce) {
      left = offsets[partition + 1] - offsets[partition];
      checksum.reset();
    }
  }
}
