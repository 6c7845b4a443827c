/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;

/**
 * A block whose bytes differ from the checksum its writer stored. Reported through Spark's
 * listener like any failed block, so Spark raises a FetchFailedException (whose message is this
 * one's) and recomputes the map output.
 */
public final class ChecksumMismatchException extends IOException {
  /** The stable start of the message, for logs and tests. */
  public static final String PREFIX = "shuffle block checksum mismatch";

  ChecksumMismatchException(BlockFetch.Block b, String what) {
    super(message("block " + b.blockId, b.descriptor.shuffleId(), b.descriptor.mapId(),
        b.startReduce, b.endReduce, "read from executor " + b.descriptor.executorId(), what));
  }

  /** The message for a block of (shuffle, map, [start, end)) at {@code where}. */
  public static String message(String block, int shuffleId, long mapId, int startReduce,
      int endReduce, String where, String what) {
    return PREFIX + " (spark.shuffle.rdma.verifyChecksums): " + block + " of shuffle "
        + shuffleId + ", map " + mapId + ", reduce partitions [" + startReduce + ", "
        + endReduce + "), " + where + ": " + what;
  }
}
