/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.verbs.impl.LoopbackVerbsChannel;

/**
 * The map outputs one fetch reads: {@code outputs} map outputs of {@code partitions}
 * partitions of {@code block} bytes each, written as one data file of random bytes, mapped,
 * and "registered" as the benchmark's regions (an index region per output, in Spark's index
 * format, and a data region per output, a slice of the mapping). Each fetch reads one
 * partition of every output, one block per output, as a reducer does.
 */
final class Outputs implements LoopbackVerbsChannel.Regions, AutoCloseable {
  /** Distance between the base addresses of two keys: far apart, like remote addresses. */
  private static final long KEY_SPAN = 1L << 36;
  private static final long REGION_SIZE = 1L << 30;

  final int block;
  final int partitions;
  final MapOutputDescriptor[] descriptors;
  /** ids[reduce][output]: Spark's block id of that partition of that output. */
  final String[][] ids;
  private final Path file;
  private final MappedByteBuffer mapping;
  private final ByteBuffer[] regions; // by key

  Outputs(int block, int outputs, int partitions, Path dir) throws IOException {
    this.block = block;
    this.partitions = partitions;
    long perOutput = (long) block * partitions;
    long total = perOutput * outputs;
    if (total > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(total + " bytes of outputs: too many");
    }
    file = Files.createTempFile(dir, "client-cost-", ".data");
    byte[] bytes = new byte[(int) total];
    new Random(block).nextBytes(bytes);
    Files.write(file, bytes);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      mapping = ch.map(FileChannel.MapMode.READ_ONLY, 0, total);
    }
    mapping.load();
    regions = new ByteBuffer[2 * outputs + 1];
    descriptors = new MapOutputDescriptor[outputs];
    ids = new String[partitions][outputs];
    for (int m = 0; m < outputs; m++) {
      ByteBuffer index = ByteBuffer.allocateDirect(8 * (partitions + 1)).order(ByteOrder.BIG_ENDIAN);
      for (int p = 0; p <= partitions; p++) {
        index.putLong(8 * p, (long) p * block);
      }
      int indexKey = 2 * m + 1;
      int dataKey = 2 * m + 2;
      regions[indexKey] = index;
      regions[dataKey] = mapping.slice((int) (m * perOutput), (int) perOutput);
      descriptors[m] = new MapOutputDescriptor(0, m, "exec-1", partitions, base(indexKey),
          indexKey, perOutput, REGION_SIZE, new long[] {base(dataKey)}, new int[] {dataKey});
      for (int p = 0; p < partitions; p++) {
        ids[p][m] = "shuffle_0_" + m + "_" + p;
      }
    }
  }

  @Override
  public ByteBuffer region(int key) {
    return key > 0 && key < regions.length ? regions[key] : null;
  }

  @Override
  public long base(int key) {
    return key * KEY_SPAN;
  }

  int outputs() {
    return descriptors.length;
  }

  /** Output {@code m}'s data region (the mapping's slice). */
  ByteBuffer data(int m) {
    return regions[2 * m + 2];
  }

  /** Which output a block id names (the map id is the output's number). */
  static int outputOf(String blockId) {
    return Integer.parseInt(blockId.substring("shuffle_0_".length(), blockId.lastIndexOf('_')));
  }

  static int reduceOf(String blockId) {
    return Integer.parseInt(blockId.substring(blockId.lastIndexOf('_') + 1));
  }

  @Override
  public void close() throws IOException {
    Files.deleteIfExists(file);
  }
}
