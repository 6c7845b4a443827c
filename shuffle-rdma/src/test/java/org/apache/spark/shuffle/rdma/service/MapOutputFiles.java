/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.Checksum;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.testing.TestFiles;

/** One committed map output in Spark's file format: data, index and CRC32 checksum files. */
final class MapOutputFiles {
  final Path data;
  final Path index;
  final Path checksums;
  final byte[] bytes;
  final long[] offsets;

  MapOutputFiles(Path dir, int shuffleId, long mapId, int[] partitionSizes, long seed)
      throws IOException {
    String stem = "shuffle_" + shuffleId + "_" + mapId + "_0";
    offsets = new long[partitionSizes.length + 1];
    for (int p = 0; p < partitionSizes.length; p++) {
      offsets[p + 1] = offsets[p] + partitionSizes[p];
    }
    bytes = TestFiles.randomBytes((int) offsets[partitionSizes.length], seed);
    data = Files.write(dir.resolve(stem + ".data"), bytes);
    index = TestFiles.writeIndex(dir.resolve(stem + ".index").toFile(), offsets).toPath();
    long[] sums = new long[partitionSizes.length];
    for (int p = 0; p < partitionSizes.length; p++) {
      Checksum c = ChecksumAlgorithm.CRC32.create();
      c.update(bytes, (int) offsets[p], partitionSizes[p]);
      sums[p] = c.getValue();
    }
    checksums = TestFiles.writeIndex(dir.resolve(stem + ".checksum.CRC32").toFile(), sums)
        .toPath();
  }

  int partitions() {
    return offsets.length - 1;
  }

  byte[] partition(int p) {
    return Arrays.copyOfRange(bytes, (int) offsets[p], (int) offsets[p + 1]);
  }

  long totalFileBytes() {
    return bytes.length + 8L * offsets.length + 8L * partitions();
  }

  void deletePaths() throws IOException {
    Files.delete(data);
    Files.delete(index);
    Files.delete(checksums);
  }
}
