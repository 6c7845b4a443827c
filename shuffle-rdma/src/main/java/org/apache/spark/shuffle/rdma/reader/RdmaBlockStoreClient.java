/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.BlockStoreClient;
import org.apache.spark.network.shuffle.BlockTransferListener;
import org.apache.spark.network.shuffle.ErrorHandler;
import org.apache.spark.network.shuffle.RetryingBlockTransferor;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.NodeServiceId;
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
 *
 * <p>A failed read is tried again as Spark's own client tries a failed fetch: Spark's {@link
 * RetryingBlockTransferor} with spark.shuffle.io.maxRetries and spark.shuffle.io.retryWait
 * reconnects and reads the blocks still outstanding, so a fabric blip (a loss burst, a port
 * flap, a reset queue pair) costs a retry, not a recomputed map stage. A refusal (no live
 * region covers the read), a refused reconnect, a checksum mismatch or a removed executor
 * is not tried again ({@link FetchRetryPolicy}).
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
   * Writes the blocks fetched to disk into Spark's download files, off the transport's
   * callback threads (a slow disk must not stall other fetches' completions). No thread until
   * a block goes to disk.
   */
  private final ExecutorService downloadWriters = DownloadWriters.create();
  /** Spare requests of one-READ blocks, shared by this executor's fetches. */
  private final RequestPool requests = new RequestPool();

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
    // Counts the failures that reach Spark (each one a fetch failure there).
    BlockFetchingListener spark = onFailure(listener, e -> stats.failedBlocks.incrementAndGet());
    List<String> registered = new ArrayList<>(blockIds.length);
    List<BlockFetch.Block> resolved = new ArrayList<>(blockIds.length);
    List<String> unregistered = new ArrayList<>();
    int shuffleId = -1;
    boolean fromService = fallback != null && port == shuffleServicePort;
    for (String id : blockIds) {
      try {
        BlockFetch.Block b = resolve(id, execId);
        if (b != null) {
          registered.add(id);
          resolved.add(b);
          shuffleId = b.descriptor.shuffleId();
        } else if (!fromService && tables.removed(execId)) {
          // Nothing serves a removed executor's files but a shuffle service: failing now
          // spares Spark's client its connection retries to a process that is gone.
          throw new IOException("executor " + execId + " was removed and Spark names no "
              + "external shuffle service for its blocks (" + host + ":" + port + ")");
        } else {
          unregistered.add(id);
        }
      } catch (IOException | RuntimeException e) {
        spark.onBlockFetchFailure(id, e);
      }
    }
    if (!unregistered.isEmpty()) {
      fetchUnregistered(host, port, execId, unregistered, spark, downloadFileManager);
    }
    if (registered.isEmpty()) {
      return;
    }
    RetriedFetch fetch = new RetriedFetch(host, port, execId, shuffleId, fromService, spark,
        downloadFileManager, resolved);
    // Spark's own retry loop, as its block transfer service runs it: each attempt reconnects
    // and reads the blocks still outstanding; a stale attempt's answers are dropped.
    new RetryingBlockTransferor(transportConf, fetch, registered.toArray(new String[0]),
        fetch.finalListener(), fetch).start();
  }

  /**
   * The registered blocks of one fetchBlocks call, read in attempts: Spark's {@link
   * RetryingBlockTransferor} starts each attempt here and asks here whether a failure may be
   * tried again ({@link FetchRetryPolicy}: not a refusal, not a removed executor). When Spark
   * lists the blocks at an external shuffle service, a block whose executor has since been
   * removed goes to Spark's client (to the service) instead: in a later attempt, once the
   * driver has said so (one question per fetch, asked on the first failure), or after the
   * last failure.
   */
  private final class RetriedFetch implements RetryingBlockTransferor.BlockTransferStarter,
      ErrorHandler {
    private final String host;
    private final int port;
    private final String execId;
    private final int shuffleId;
    private final boolean fromService;
    private final BlockFetchingListener spark;
    private final DownloadFileManager downloads;
    private final FetchRetryPolicy policy;
    /** Failures from Spark's own client: already retried there, never again here. */
    private final Set<Throwable> fromFallback =
        Collections.newSetFromMap(Collections.synchronizedMap(new IdentityHashMap<>()));
    private final AtomicBoolean loggedOne = new AtomicBoolean();
    /**
     * The blocks fetchBlocks resolved, in the order of the ids Spark's transferor starts the
     * first attempt with: used once, so the block ids are parsed and looked up once per
     * fetch; a retry resolves the outstanding ones again (the directory may have changed).
     */
    private List<BlockFetch.Block> firstAttempt; // guarded by this
    private CompletableFuture<Boolean> departed; // guarded by this

    RetriedFetch(String host, int port, String execId, int shuffleId, boolean fromService,
        BlockFetchingListener spark, DownloadFileManager downloads,
        List<BlockFetch.Block> firstAttempt) {
      this.firstAttempt = firstAttempt;
      this.host = host;
      this.port = port;
      this.execId = execId;
      this.shuffleId = shuffleId;
      this.fromService = fromService;
      this.spark = spark;
      this.downloads = downloads;
      // A removed executor's handed-over outputs are served by its node service, which
      // lives on: its removal is no reason not to retry them (only when every block is).
      boolean servicesOnly = !firstAttempt.isEmpty();
      for (int i = 0; i < firstAttempt.size() && servicesOnly; i++) {
        servicesOnly = NodeServiceId.isService(firstAttempt.get(i).descriptor.executorId());
      }
      boolean retryAfterRemoval = servicesOnly;
      this.policy = new FetchRetryPolicy(() -> !retryAfterRemoval && tables.removed(execId),
          stats.fetchRetries);
    }

    /** Where a block's last failure goes: Spark, or first the departure check. */
    BlockFetchingListener finalListener() {
      return !fromService ? spark : new BlockFetchingListener() {
        @Override
        public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
          spark.onBlockFetchSuccess(blockId, data);
        }

        @Override
        public void onBlockFetchFailure(String blockId, Throwable cause) {
          if (fromFallback.contains(cause)) {
            spark.onBlockFetchFailure(blockId, cause); // the service itself failed it
            return;
          }
          departed().whenComplete((gone, checkFailed) -> {
            if (Boolean.TRUE.equals(gone)) {
              stats.removedExecutorBlocks.incrementAndGet();
              fetchUnregistered(host, port, execId, List.of(blockId), spark, downloads);
            } else {
              spark.onBlockFetchFailure(blockId, cause);
            }
          });
        }
      };
    }

    /**
     * Spark logs each block it gives up on with the whole stack trace; one per fetch is
     * enough (Spark's fetcher reports every failed block again as a fetch failure).
     */
    @Override
    public boolean shouldLogError(Throwable t) {
      return loggedOne.compareAndSet(false, true);
    }

    @Override
    public boolean shouldRetryError(Throwable t) {
      if (fromFallback.contains(t)) {
        return false;
      }
      if (fromService) {
        departed(); // answered before the next attempt resolves the blocks again
      }
      return policy.shouldRetryError(t);
    }

    @Override
    public void createAndStart(String[] ids, BlockTransferListener attempt) {
      BlockFetchingListener reads = (BlockFetchingListener) attempt;
      List<BlockFetch.Block> first;
      synchronized (this) {
        first = firstAttempt;
        firstAttempt = null;
      }
      if (first != null && first.size() != ids.length) {
        first = null;
      }
      // By the address that serves them: the executor, or the node service it handed some
      // of its outputs to (one BlockFetch per address).
      Map<PeerAddress, List<BlockFetch.Block>> byPeer = new LinkedHashMap<>(2);
      List<String> departedIds = new ArrayList<>();
      for (int i = 0; i < ids.length; i++) {
        String id = ids[i];
        BlockFetch.Block b;
        try {
          b = first != null && first.get(i).blockId.equals(id) ? first.get(i)
              : resolve(id, execId);
          if (b == null) {
            if (!fromService) {
              throw new IOException("executor " + execId + " was removed; no registration "
                  + "serves " + id + " any more");
            }
            departedIds.add(id);
            continue;
          }
        } catch (IOException | RuntimeException e) {
          reads.onBlockFetchFailure(id, e);
          continue;
        }
        byPeer.computeIfAbsent(b.peer, p -> new ArrayList<>(ids.length)).add(b);
      }
      if (!departedIds.isEmpty()) {
        stats.removedExecutorBlocks.addAndGet(departedIds.size());
        // Spark's client retried its failures already: marked, so they are final here.
        fetchUnregistered(host, port, execId, departedIds, onFailure(reads, fromFallback::add),
            downloads);
      }
      byPeer.forEach((peer, blocks) -> start(peer, blocks, reads));
    }

    private void start(PeerAddress peer, List<BlockFetch.Block> blocks,
        BlockFetchingListener reads) {
      TransportChannel channel;
      try {
        channel = transport.connect(peer);
      } catch (IOException | RuntimeException e) {
        // Failed block by block, never thrown: Spark would fail every block of the attempt
        // again, also those already answered above.
        IOException failure = new IOException("cannot connect to the " + transport.name()
            + " transport of executor " + execId + " at " + peer + ": " + e.getMessage(), e);
        for (BlockFetch.Block b : blocks) {
          reads.onBlockFetchFailure(b.blockId, failure);
        }
        return;
      }
      new BlockFetch(blocks, channel, reads, downloads, transportConf, stats, indexes,
          downloadWriters, requests).start();
    }

    private synchronized CompletableFuture<Boolean> departed() {
      if (departed == null) {
        departed = CompletableFuture.supplyAsync(() -> tables.departed(shuffleId, execId),
            departureChecks);
      }
      return departed;
    }
  }

  /**
   * Passes every outcome on to {@code next}, and each failure first to {@code seen}
   * (counting it, or marking where it came from).
   */
  private static BlockFetchingListener onFailure(BlockFetchingListener next,
      Consumer<Throwable> seen) {
    return new BlockFetchingListener() {
      @Override
      public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
        next.onBlockFetchSuccess(blockId, data);
      }

      @Override
      public void onBlockFetchFailure(String blockId, Throwable cause) {
        seen.accept(cause);
        next.onBlockFetchFailure(blockId, cause);
      }
    };
  }

  private void fetchUnregistered(String host, int port, String execId, List<String> ids,
      BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
    if (fallback == null) {
      IOException e = new IOException("no registered map output on executor " + execId
          + " (lost executor or unregistered output)");
      for (String id : ids) {
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
    // Files still being written finish on the threads that deliver their pieces.
    downloadWriters.shutdown();
  }
}
