/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import java.nio.MappedByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

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
