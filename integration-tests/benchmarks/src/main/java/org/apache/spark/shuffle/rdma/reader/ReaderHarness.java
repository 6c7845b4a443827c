/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/**
 * The reducer cost benchmark's (issue 28) way into the reader: what RdmaBlockStoreClient does
 * once Spark's block ids are resolved to registrations, with the real {@link BlockFetch},
 * {@link IndexCache} (shared by every fetch, as on an executor) and {@link ReaderStats}. In
 * this package because those classes are package-private. Not included: Spark's parsing of
 * the block id strings (BlockId.apply) and the table lookup (ShuffleTableCache.locateOrNull),
 * which run before the fetch in RdmaBlockStoreClient.fetchBlocks.
 */
public final class ReaderHarness {
  private final ReaderStats stats = new ReaderStats();
  private final IndexCache indexes;
  private final TransportConf transportConf = new TransportConf("shuffle", MapConfigProvider.EMPTY);
  private final PeerAddress peer = new PeerAddress("127.0.0.1", 1);

  public ReaderHarness(long indexCacheBytes) {
    this.indexes = new IndexCache(indexCacheBytes, stats, false);
  }

  /**
   * Fetches partition {@code reduce} of each output as one block (ids given), in memory (no
   * download files), through {@code channel}; the blocks end through {@code listener}. A
   * fresh Block per block and fetch, as RdmaBlockStoreClient makes them; the READs' requests
   * come from the shared {@link RequestPool}, as the client's come from its own.
   */
  public void fetch(MapOutputDescriptor[] outputs, String[] ids, int reduce,
      TransportChannel channel, BlockFetchingListener listener) {
    List<BlockFetch.Block> blocks = new ArrayList<>(outputs.length);
    for (int i = 0; i < outputs.length; i++) {
      blocks.add(new BlockFetch.Block(ids[i], reduce, reduce + 1, outputs[i], peer));
    }
    new BlockFetch(blocks, channel, listener, null, transportConf, stats, indexes).start();
  }

  /** Remote blocks delivered so far. */
  public long remoteBlocks() {
    return stats.remoteBlocks.get();
  }

  /** Fetches that found every index cached. */
  public long cachedFetches() {
    return stats.cachedFetches.get();
  }

  /** Data READs posted so far. */
  public long dataReads() {
    return stats.dataReads.get();
  }
}
