/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.writer;

import java.io.IOException;

import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Spark's own shuffle writer (sort, bypass-merge or unsafe), plus one step after a successful
 * commit: the map output is registered for remote reads and its descriptor published, before
 * the MapStatus goes back to the driver. So any reducer that learns of this map output from
 * Spark's MapOutputTracker finds its registration already published.
 */
public final class RegisteringShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  /** Registers and publishes one committed map output. */
  public interface CommitHook {
    void committed(int shuffleId, long mapId) throws IOException;
  }

  private final ShuffleWriter<K, V> delegate;
  private final int shuffleId;
  private final long mapId;
  private final CommitHook hook;

  public RegisteringShuffleWriter(ShuffleWriter<K, V> delegate, int shuffleId, long mapId,
      CommitHook hook) {
    this.delegate = delegate;
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.hook = hook;
  }

  @Override
  public void write(Iterator<Product2<K, V>> records) throws IOException {
    delegate.write(records);
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    Option<MapStatus> status = delegate.stop(success);
    if (success && status.isDefined()) {
      try {
        hook.committed(shuffleId, mapId);
      } catch (IOException e) {
        throw new IllegalStateException("map output " + mapId + " of shuffle " + shuffleId
            + " was written but could not be registered for remote reads: " + e.getMessage(), e);
      }
    }
    return status;
  }

  @Override
  public long[] getPartitionLengths() {
    return delegate.getPartitionLengths();
  }
}
