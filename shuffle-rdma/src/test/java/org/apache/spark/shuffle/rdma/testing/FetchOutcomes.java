/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.testing;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;

/**
 * A block fetch's outcomes by block id: the bytes (copied at once, and checked against the
 * buffer's {@code size()}) and the buffer's class, or the error; {@link #all} completes when
 * every one of the expected blocks has an outcome.
 */
public final class FetchOutcomes implements BlockFetchingListener {
  public final Map<String, byte[]> bytes = new ConcurrentHashMap<>();
  public final Map<String, Class<?>> kinds = new ConcurrentHashMap<>();
  public final Map<String, Throwable> failures = new ConcurrentHashMap<>();
  public final CompletableFuture<Void> all = new CompletableFuture<>();
  /** With {@link #retaining}: every block, retained as Spark's fetcher retains it. */
  public final Map<String, ManagedBuffer> held = new ConcurrentHashMap<>();
  private final int expected;
  private final boolean retain;

  public FetchOutcomes(int expected) {
    this(expected, false);
  }

  private FetchOutcomes(int expected, boolean retain) {
    this.expected = expected;
    this.retain = retain;
  }

  /** Outcomes that also keep each block retained (in {@link #held}) until the test releases. */
  public static FetchOutcomes retaining(int expected) {
    return new FetchOutcomes(expected, true);
  }

  @Override
  public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
    try {
      byte[] out = ReadResult.bytesOf(data);
      if (out.length != data.size()) {
        throw new IOException("size " + data.size() + " but " + out.length + " bytes");
      }
      bytes.put(blockId, out);
      kinds.put(blockId, data.getClass());
      if (retain) {
        held.put(blockId, data.retain());
      }
    } catch (IOException e) {
      failures.put(blockId, e);
    }
    done();
  }

  @Override
  public void onBlockFetchFailure(String blockId, Throwable e) {
    failures.put(blockId, e);
    done();
  }

  private synchronized void done() {
    if (bytes.size() + failures.size() == expected) {
      all.complete(null);
    }
  }
}
