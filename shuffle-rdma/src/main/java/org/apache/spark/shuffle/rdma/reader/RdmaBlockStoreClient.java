/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.BlockStoreClient;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;

/**
 * The BlockStoreClient that Spark's ShuffleBlockFetcherIterator uses for remote shuffle
 * blocks when this plugin is active: instead of asking the remote block manager over Netty,
 * it resolves each block to registered memory and reads it one-sidedly. Spark keeps doing
 * everything around it: flow control, local reads, corruption checks, metrics, and turning
 * a failure reported here into a FetchFailedException for the right map output.
 *
 * <p>A block with no registration on the executor Spark names (migrated there by executor
 * decommissioning, or served by an external shuffle service) is handed to Spark's own
 * block store client, which fetches it from that executor's block manager as the sort
 * shuffle would. Correct, not one-sided; counted as {@code reader.fallbackBlocks}.
 *
 * <p>The same goes for the outputs of an executor Spark removed (released by dynamic
 * allocation, decommissioned, lost) while it keeps their map statuses, as it does with an
 * external shuffle service: Spark names the service's port, and the removed executor has
 * left the driver's directory, so its outputs resolve to nothing and go to Spark's client,
 * which asks the service. A reader whose directory predates the removal still resolves them
 * and its read fails; before that failure reaches Spark (as a fetch failure, which would
 * re-run the map tasks) the reader asks the driver whether the executor is gone
 * ({@link ShuffleTableCache#departed}) and, if so, fetches the block through Spark's client.
 * Without a shuffle service (Spark names the executor's own block manager) a removed
 * executor's blocks fail at once, as before: nothing serves them.
 */
public final class RdmaBlockStoreClient extends BlockStoreClient {
  private final ShuffleTransport transport;
  private final ShuffleTableCache tables;
  private final TransportConf transportConf;
  private final BlockStoreClient fallback;
  private final ReaderStats stats = new ReaderStats();
  private final IndexCache indexes;
  private final int shuffleServicePort;
  /**
   * Runs the departure checks (a round trip to the driver) off the thread that reported the
   * failure, which may be a transport thread. No thread until a read fails.
   */
  private final ExecutorService departureChecks = departureCheckThreads();

  /**
   * @param fallback Spark's own client (the block manager's), for blocks that are not
   *     registered where Spark expects them; null to fail such blocks instead
   * @param indexCacheBytes bound of the map-output index cache (spark.shuffle.rdma.indexCacheSize)
   */
  public RdmaBlockStoreClient(ShuffleTransport transport, ShuffleTableCache tables,
      TransportConf transportConf, BlockStoreClient fallback, long indexCacheBytes) {
    this(transport, tables, transportConf, fallback, indexCacheBytes, false, -1);
  }

  /**
   * @param verifyChecksums check each block against its writer's per-partition checksums
   *     (spark.shuffle.rdma.verifyChecksums)
   * @param shuffleServicePort the port of Spark's external shuffle service when it is enabled,
   *     else -1: blocks of a removed executor that Spark lists at this port are fetched from
   *     the service through {@code fallback}; at any other port they fail at once (nothing
   *     serves them)
   */
  public RdmaBlockStoreClient(ShuffleTransport transport, ShuffleTableCache tables,
      TransportConf transportConf, BlockStoreClient fallback, long indexCacheBytes,
      boolean verifyChecksums, int shuffleServicePort) {
    this.shuffleServicePort = shuffleServicePort;
    this.transport = transport;
    this.tables = tables;
    this.transportConf = transportConf;
    this.fallback = fallback;
    this.indexes = new IndexCache(indexCacheBytes, stats, verifyChecksums);
  }

  private static ExecutorService departureCheckThreads() {
    ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "rdma-shuffle-departure-check");
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  public ReaderStats stats() {
    return stats;
  }

  /** Drops the cached indexes of a shuffle Spark unregistered. */
  public void forgetShuffle(int shuffleId) {
    indexes.forget(shuffleId);
  }

  @Override
  public void fetchBlocks(String host, int port, String execId, String[] blockIds,
      BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
    stats.fetchCalls.incrementAndGet();
    List<BlockFetch.Block> blocks = new ArrayList<>(blockIds.length);
    List<String> unregistered = new ArrayList<>();
    PeerAddress peer = null;
    boolean fromService = fallback != null && port == shuffleServicePort;
    for (String id : blockIds) {
      try {
        BlockFetch.Block b = resolve(id, execId);
        if (b == null) {
          if (!fromService && tables.removed(execId)) {
            // Nothing serves a removed executor's files but a shuffle service: failing now
            // spares Spark's client its connection retries to a process that is gone.
            throw new IOException("executor " + execId + " was removed and Spark names no "
                + "external shuffle service for its blocks (" + host + ":" + port + ")");
          }
          unregistered.add(id);
          continue;
        }
        if (peer != null && !peer.equals(b.peer)) {
          throw new IOException("executor " + execId + " changed its transport address from "
              + peer + " to " + b.peer);
        }
        peer = b.peer;
        blocks.add(b);
      } catch (IOException | RuntimeException e) {
        stats.failedBlocks.incrementAndGet();
        listener.onBlockFetchFailure(id, e);
      }
    }
    if (!unregistered.isEmpty()) {
      fetchUnregistered(host, port, execId, unregistered, listener, downloadFileManager);
    }
    if (blocks.isEmpty()) {
      return;
    }
    BlockFetchingListener reads = !fromService ? listener : new DepartureCheck(host, port,
        execId, blocks.get(0).descriptor.shuffleId(), listener, downloadFileManager);
    TransportChannel channel;
    try {
      channel = transport.connect(peer);
    } catch (IOException | RuntimeException e) {
      IOException failure = new IOException("cannot connect to the " + transport.name()
          + " transport of executor " + execId + " at " + peer + ": " + e.getMessage(), e);
      for (BlockFetch.Block b : blocks) {
        stats.failedBlocks.incrementAndGet();
        reads.onBlockFetchFailure(b.blockId, failure);
      }
      return;
    }
    new BlockFetch(blocks, channel, reads, downloadFileManager, transportConf, stats, indexes)
        .start();
  }

  /**
   * The listener of one fetch's one-sided reads when Spark lists the blocks at an external
   * shuffle service: a block whose read failed goes to Spark's client (to the service)
   * instead if its executor has been removed (one question to the driver per fetch, asked on
   * the first failure), else its failure goes to Spark.
   */
  private final class DepartureCheck implements BlockFetchingListener {
    private final String host;
    private final int port;
    private final String execId;
    private final int shuffleId;
    private final BlockFetchingListener listener;
    private final DownloadFileManager downloadFileManager;
    private CompletableFuture<Boolean> departed; // guarded by this

    DepartureCheck(String host, int port, String execId, int shuffleId,
        BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
      this.host = host;
      this.port = port;
      this.execId = execId;
      this.shuffleId = shuffleId;
      this.listener = listener;
      this.downloadFileManager = downloadFileManager;
    }

    @Override
    public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
      listener.onBlockFetchSuccess(blockId, data);
    }

    @Override
    public void onBlockFetchFailure(String blockId, Throwable cause) {
      departed().whenComplete((gone, checkFailed) -> {
        if (Boolean.TRUE.equals(gone)) {
          stats.failedBlocks.decrementAndGet(); // not failed after all: read elsewhere
          stats.removedExecutorBlocks.incrementAndGet();
          fetchUnregistered(host, port, execId, List.of(blockId), listener,
              downloadFileManager);
        } else {
          listener.onBlockFetchFailure(blockId, cause);
        }
      });
    }

    private synchronized CompletableFuture<Boolean> departed() {
      if (departed == null) {
        departed = CompletableFuture.supplyAsync(() -> tables.departed(shuffleId, execId),
            departureChecks);
      }
      return departed;
    }
  }

  private void fetchUnregistered(String host, int port, String execId, List<String> ids,
      BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
    if (fallback == null) {
      IOException e = new IOException("no registered map output on executor " + execId
          + " (lost executor or unregistered output)");
      for (String id : ids) {
        stats.failedBlocks.incrementAndGet();
        listener.onBlockFetchFailure(id, e);
      }
      return;
    }
    stats.fallbackBlocks.addAndGet(ids.size());
    fallback.fetchBlocks(host, port, execId, ids.toArray(new String[0]), listener,
        downloadFileManager);
  }

  /** The block and where it is registered; null if not registered on {@code execId}. */
  private BlockFetch.Block resolve(String id, String execId) throws IOException {
    BlockId blockId = BlockId.apply(id);
    if (blockId instanceof ShuffleBlockId) {
      ShuffleBlockId s = (ShuffleBlockId) blockId;
      ShuffleTableCache.Location at = tables.locateOrNull(s.shuffleId(), s.mapId(), execId);
      return at == null ? null : new BlockFetch.Block(id, s.reduceId(), s.reduceId() + 1, at);
    }
    if (blockId instanceof ShuffleBlockBatchId) {
      ShuffleBlockBatchId s = (ShuffleBlockBatchId) blockId;
      ShuffleTableCache.Location at = tables.locateOrNull(s.shuffleId(), s.mapId(), execId);
      return at == null ? null
          : new BlockFetch.Block(id, s.startReduceId(), s.endReduceId(), at);
    }
    throw new IOException("block " + id + " is not a shuffle block; the RDMA shuffle client "
        + "serves only shuffle_* blocks (push-based merged blocks are not supported)");
  }

  @Override
  public void close() {
    // The transport is owned and closed by the executor runtime.
    departureChecks.shutdown();
  }
}
