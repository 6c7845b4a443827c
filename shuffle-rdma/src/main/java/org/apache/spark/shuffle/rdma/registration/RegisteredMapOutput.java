/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.checksum.PartitionVerifier;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.storage.StorageUtils;

/**
 * One committed map output as this executor serves it: the mappings of its index and data
 * files, their registrations, and the descriptor published for them. Owns the mappings:
 * {@link #release} revokes every key and unmaps each mapping once the transport is done
 * with it (unmapping earlier would crash a serve still writing from it).
 */
final class RegisteredMapOutput {
  private final MapOutputDescriptor descriptor;
  private final List<MappedByteBuffer> mappings;
  private final List<RegisteredRegion> regions;
  private final BackingCheck dataBacking;

  RegisteredMapOutput(MapOutputDescriptor descriptor, List<MappedByteBuffer> mappings,
      List<RegisteredRegion> regions, BackingCheck dataBacking) {
    this.descriptor = descriptor;
    this.mappings = mappings;
    this.regions = regions;
    this.dataBacking = dataBacking;
  }

  String integrityProblem() {
    return dataBacking.problem();
  }

  /**
   * A verifier fed with the bytes of partitions [startReduce, endReduce) as this executor
   * serves them (its registered mappings: the index first, then the data regions, then the
   * checksums), or null when the output has no checksums registered. The caller finishes it.
   */
  PartitionVerifier verify(int startReduce, int endReduce) {
    ChecksumAlgorithm algorithm = descriptor.checksumAlgorithm();
    if (algorithm == ChecksumAlgorithm.NONE) {
      return null;
    }
    int n = descriptor.numPartitions();
    if (startReduce < 0 || endReduce > n || startReduce >= endReduce) {
      throw new IllegalArgumentException("partitions [" + startReduce + ", " + endReduce
          + ") of an output with " + n);
    }
    ByteBuffer index = mappings.get(0).duplicate();
    long[] offsets = new long[n + 1];
    for (int i = 0; i <= n; i++) {
      offsets[i] = index.getLong(8 * i);
    }
    ByteBuffer sums = mappings.get(mappings.size() - 1).duplicate();
    long[] checksums = new long[n];
    for (int i = 0; i < n; i++) {
      checksums[i] = sums.getLong(8 * i);
    }
    PartitionVerifier v = new PartitionVerifier(offsets, checksums, algorithm, startReduce,
        endReduce);
    long regionSize = descriptor.regionSize();
    long at = offsets[startReduce];
    long end = offsets[endReduce];
    if (at < 0 || end < at || end > descriptor.dataLength()) {
      throw new IllegalStateException("index of " + descriptor + " changed: [" + at + ", "
          + end + ")");
    }
    while (at < end) {
      int region = (int) (at / regionSize);
      ByteBuffer data = mappings.get(1 + region).duplicate();
      int from = (int) (at - region * regionSize);
      int to = (int) Math.min(data.capacity(), end - region * regionSize);
      data.limit(to).position(from);
      v.update(data);
      at += to - from;
    }
    return v;
  }

  MapOutputDescriptor descriptor() {
    return descriptor;
  }

  long registeredBytes() {
    long n = 0;
    for (RegisteredRegion r : regions) {
      n += r.length();
    }
    return n;
  }

  /** Revokes all keys now; the returned future completes when every mapping is unmapped. */
  CompletableFuture<Void> release(ShuffleTransport transport) {
    CompletableFuture<?>[] done = new CompletableFuture<?>[regions.size()];
    for (int i = 0; i < regions.size(); i++) {
      MappedByteBuffer mapping = mappings.get(i);
      done[i] = transport.deregister(regions.get(i))
          .thenRun(() -> StorageUtils.dispose(mapping));
    }
    return CompletableFuture.allOf(done);
  }
}
