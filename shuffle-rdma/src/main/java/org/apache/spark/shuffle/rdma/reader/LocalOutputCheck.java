/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

/**
 * What the reader asks about this executor's own map outputs before Spark reads their blocks
 * from the files (Spark's local path has no check of its own that would notice a short or
 * changed file). Each answer is null when all is well, else what is wrong, which the reader
 * turns into a fetch failure so Spark recomputes the output.
 */
public interface LocalOutputCheck {
  /** Whether the registered output's files still hold every registered byte. */
  String integrityProblem(int shuffleId, long mapId);

  /**
   * With spark.shuffle.rdma.verifyChecksums: whether partitions [startReduce, endReduce) of
   * the output still match the writer's checksums. Asked only after
   * {@link #integrityProblem} found the output whole (reading a mapping past a truncated
   * file's end would fault).
   */
  String checksumProblem(String blockId, int shuffleId, long mapId, int startReduce,
      int endReduce);
}
