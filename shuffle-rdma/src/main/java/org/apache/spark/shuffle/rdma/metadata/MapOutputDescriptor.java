/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;

/**
 * Where one committed map output lives in its executor's registered memory: the index
 * region (Spark's index file: numPartitions + 1 big-endian longs, the partition offsets)
 * and the data file, registered as consecutive regions of {@code regionSize} bytes.
 * A reader needs nothing else to fetch any partition range of this output.
 *
 * <p>With spark.shuffle.rdma.verifyChecksums, also the region of Spark's checksum file
 * (numPartitions big-endian longs, one per partition, of {@link #checksumAlgorithm()}), read
 * and cached by reducers like the index, so the table does not grow per partition.
 *
 * <p>Encoded size: 51 bytes plus the executor id plus 12 per data region (one region per GiB
 * of data), plus 12 when checksums are registered; independent of the number of partitions.
 */
public final class MapOutputDescriptor {
  private final int shuffleId;
  private final long mapId;
  private final String executorId;
  private final int numPartitions;
  private final long indexAddress;
  private final int indexKey;
  private final long dataLength;
  private final long regionSize;
  private final long[] dataAddresses;
  private final int[] dataKeys;
  private final ChecksumAlgorithm checksumAlgorithm;
  private final long checksumAddress;
  private final int checksumKey;

  /** An output without registered checksums. */
  public MapOutputDescriptor(int shuffleId, long mapId, String executorId, int numPartitions,
      long indexAddress, int indexKey, long dataLength, long regionSize, long[] dataAddresses,
      int[] dataKeys) {
    this(shuffleId, mapId, executorId, numPartitions, indexAddress, indexKey, dataLength,
        regionSize, dataAddresses, dataKeys, ChecksumAlgorithm.NONE, 0L, 0);
  }

  public MapOutputDescriptor(int shuffleId, long mapId, String executorId, int numPartitions,
      long indexAddress, int indexKey, long dataLength, long regionSize, long[] dataAddresses,
      int[] dataKeys, ChecksumAlgorithm checksumAlgorithm, long checksumAddress,
      int checksumKey) {
    if (dataAddresses.length != dataKeys.length) {
      throw new IllegalArgumentException("one key per data region");
    }
    if (executorId == null) {
      throw new IllegalArgumentException("no executor id");
    }
    if (numPartitions < 0) {
      throw new IllegalArgumentException(numPartitions + " partitions");
    }
    long expectedRegions = expectedRegions(dataLength, regionSize);
    if (expectedRegions != dataAddresses.length) {
      throw new IllegalArgumentException("data of " + dataLength + " bytes in regions of "
          + regionSize + " needs " + expectedRegions + " regions, got " + dataAddresses.length);
    }
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.executorId = executorId;
    this.numPartitions = numPartitions;
    this.indexAddress = indexAddress;
    this.indexKey = indexKey;
    this.dataLength = dataLength;
    this.regionSize = regionSize;
    this.dataAddresses = dataAddresses;
    this.dataKeys = dataKeys;
    this.checksumAlgorithm = checksumAlgorithm;
    this.checksumAddress = checksumAlgorithm == ChecksumAlgorithm.NONE ? 0L : checksumAddress;
    this.checksumKey = checksumAlgorithm == ChecksumAlgorithm.NONE ? 0 : checksumKey;
  }

  /**
   * Data regions that {@code dataLength} bytes in regions of {@code regionSize} take; an
   * IllegalArgumentException for a negative length or a region size below 1.
   */
  static long expectedRegions(long dataLength, long regionSize) {
    if (dataLength < 0 || regionSize < 1) {
      throw new IllegalArgumentException("data of " + dataLength + " bytes in regions of "
          + regionSize);
    }
    return dataLength == 0 ? 0 : (dataLength - 1) / regionSize + 1;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public long mapId() {
    return mapId;
  }

  public String executorId() {
    return executorId;
  }

  public int numPartitions() {
    return numPartitions;
  }

  public long indexAddress() {
    return indexAddress;
  }

  public int indexKey() {
    return indexKey;
  }

  public long dataLength() {
    return dataLength;
  }

  public long regionSize() {
    return regionSize;
  }

  public int dataRegionCount() {
    return dataAddresses.length;
  }

  public long dataAddress(int region) {
    return dataAddresses[region];
  }

  public int dataKey(int region) {
    return dataKeys[region];
  }

  /** NONE when the output's checksums are not registered. */
  public ChecksumAlgorithm checksumAlgorithm() {
    return checksumAlgorithm;
  }

  /** Remote address of the checksum region (numPartitions longs); 0 without one. */
  public long checksumAddress() {
    return checksumAddress;
  }

  public int checksumKey() {
    return checksumKey;
  }

  /**
   * The same registration under another executor id: a node service names its outputs
   * "node-service"; the executor that handed one over publishes it under the service's
   * {@link NodeServiceId}, which readers resolve to the service's address.
   */
  public MapOutputDescriptor withExecutorId(String id) {
    return new MapOutputDescriptor(shuffleId, mapId, id, numPartitions, indexAddress, indexKey,
        dataLength, regionSize, dataAddresses, dataKeys, checksumAlgorithm, checksumAddress,
        checksumKey);
  }

  /** Remote address of index entry {@code partition} (0..numPartitions). */
  public long indexEntryAddress(int partition) {
    if (partition < 0 || partition > numPartitions) {
      throw new IndexOutOfBoundsException("partition " + partition + " of " + numPartitions);
    }
    return indexAddress + 8L * partition;
  }

  public void writeTo(DataOutput out) throws IOException {
    out.writeInt(shuffleId);
    out.writeLong(mapId);
    out.writeUTF(executorId);
    out.writeInt(numPartitions);
    out.writeLong(indexAddress);
    out.writeInt(indexKey);
    out.writeLong(dataLength);
    out.writeLong(regionSize);
    out.writeInt(dataAddresses.length);
    for (int i = 0; i < dataAddresses.length; i++) {
      out.writeLong(dataAddresses[i]);
      out.writeInt(dataKeys[i]);
    }
    out.writeByte(checksumAlgorithm.code());
    if (checksumAlgorithm != ChecksumAlgorithm.NONE) {
      out.writeLong(checksumAddress);
      out.writeInt(checksumKey);
    }
  }

  public static MapOutputDescriptor readFrom(DataInput in) throws IOException {
    int shuffleId = in.readInt();
    long mapId = in.readLong();
    String executorId = in.readUTF();
    int numPartitions = in.readInt();
    long indexAddress = in.readLong();
    int indexKey = in.readInt();
    long dataLength = in.readLong();
    long regionSize = in.readLong();
    int n = in.readInt();
    long expected;
    try {
      expected = expectedRegions(dataLength, regionSize);
    } catch (IllegalArgumentException e) {
      throw new IOException("corrupt descriptor: " + e.getMessage());
    }
    if (n < 0 || n > 1 << 20 || n != expected || numPartitions < 0) {
      throw new IOException("corrupt descriptor: " + n + " data regions for " + dataLength
          + " bytes in regions of " + regionSize + ", " + numPartitions + " partitions");
    }
    // The count comes from the wire: the arrays grow with the entries actually read (12
    // bytes each), so a count the bytes do not back ends in EOFException, not a large array.
    long[] addresses = new long[Math.min(n, 16)];
    int[] keys = new int[addresses.length];
    for (int i = 0; i < n; i++) {
      if (i == addresses.length) {
        int grown = (int) Math.min(n, 2L * i);
        addresses = Arrays.copyOf(addresses, grown);
        keys = Arrays.copyOf(keys, grown);
      }
      addresses[i] = in.readLong();
      keys[i] = in.readInt();
    }
    ChecksumAlgorithm algorithm;
    try {
      algorithm = ChecksumAlgorithm.ofCode(in.readByte());
    } catch (IllegalArgumentException e) {
      throw new IOException("corrupt descriptor: " + e.getMessage());
    }
    long checksumAddress = 0L;
    int checksumKey = 0;
    if (algorithm != ChecksumAlgorithm.NONE) {
      checksumAddress = in.readLong();
      checksumKey = in.readInt();
    }
    try {
      return new MapOutputDescriptor(shuffleId, mapId, executorId, numPartitions, indexAddress,
          indexKey, dataLength, regionSize, addresses, keys, algorithm, checksumAddress,
          checksumKey);
    } catch (IllegalArgumentException e) {
      throw new IOException("corrupt descriptor: " + e.getMessage());
    }
  }

  @Override
  public String toString() {
    return "MapOutput(shuffle=" + shuffleId + ", map=" + mapId + ", exec=" + executorId
        + ", partitions=" + numPartitions + ", data=" + dataLength + "B in "
        + dataAddresses.length + " regions"
        + (checksumAlgorithm == ChecksumAlgorithm.NONE ? "" : ", " + checksumAlgorithm) + ")";
  }
}
