/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;

/**
 * What a reducer executor caches per map output: the partition offsets from Spark's index
 * and, when it verifies checksums and the writer stored them, one checksum per partition.
 */
final class OutputIndex {
  final long[] offsets;
  /** Null when the output is read unverified. */
  final long[] checksums;
  final ChecksumAlgorithm algorithm;

  OutputIndex(long[] offsets, long[] checksums, ChecksumAlgorithm algorithm) {
    this.offsets = offsets;
    this.checksums = checksums;
    this.algorithm = checksums == null ? ChecksumAlgorithm.NONE : algorithm;
  }

  /** Heap bytes of the arrays. */
  long bytes() {
    return 8L * offsets.length + (checksums == null ? 0 : 8L * checksums.length);
  }
}
