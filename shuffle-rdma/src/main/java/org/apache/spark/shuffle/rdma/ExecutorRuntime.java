/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.File;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.spark.SparkEnv;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.rdma.compat.SparkShims;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.metadata.MetadataRpc;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.checksum.PartitionVerifier;
import org.apache.spark.shuffle.rdma.reader.ChecksumMismatchException;
import org.apache.spark.shuffle.rdma.reader.LocalOutputCheck;
import org.apache.spark.shuffle.rdma.reader.RdmaBlockStoreClient;
import org.apache.spark.shuffle.rdma.reader.ReaderStats;
import org.apache.spark.shuffle.rdma.registration.MapOutputRegistry;
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * Everything an executor (or the driver in local mode) runs for this plugin, created on the
 * first shuffle task: the transport, the registry of map outputs it serves, the metadata
 * cache and the block store client its reducers use. Created lazily because Spark may build
 * the shuffle manager before SparkEnv is complete.
 */
final class ExecutorRuntime implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorRuntime.class);

  private final ShuffleTransport transport;
  private final MapOutputRegistry registry;
  private final ShuffleTableCache tables;
  private final RdmaBlockStoreClient client;
  private final IndexShuffleBlockResolver resolver;
  private final RdmaMetricsSource metrics;
  private final WriterChecksums checksums;
  private final boolean verifyChecksums;
  /** This executor's node service, or null without one (spark.shuffle.rdma.service.socket). */
  private final NodeServiceHandOff service;
  /** Committed outputs whose registration failed: served unregistered (a counter). */
  private final java.util.concurrent.atomic.AtomicLong registrationFailures =
      new java.util.concurrent.atomic.AtomicLong();
  private final LocalOutputCheck localCheck = new LocalOutputCheck() {
    @Override
    public String integrityProblem(int shuffleId, long mapId) {
      return registry.integrityProblem(shuffleId, mapId);
    }

    @Override
    public String checksumProblem(String blockId, int shuffleId, long mapId, int startReduce,
        int endReduce) {
      return localChecksumProblem(blockId, shuffleId, mapId, startReduce, endReduce);
    }
  };

  ExecutorRuntime(RdmaShuffleConf conf, IndexShuffleBlockResolver resolver) throws IOException {
    SparkEnv env = SparkEnv.get();
    this.resolver = resolver;
    this.verifyChecksums = conf.verifyChecksums();
    this.checksums = WriterChecksums.of(conf.sparkConf(), verifyChecksums);
    int cores = conf.sparkConf().getInt("spark.executor.cores", 0);
    TransportSettings settings = new TransportSettings(conf,
        env.blockManager().blockManagerId().host(), env.securityManager(),
        conf.sparkConf().getAppId(), cores);
    this.transport = TransportFactory.create(settings);
    boolean started = false;
    try {
      this.registry = new MapOutputRegistry(transport, conf.regionSize(), env.executorId(),
          conf.maxRegisteredBytes());
      RpcEndpointRef master = MetadataRpc.masterRef(env);
      this.tables = new ShuffleTableCache(master, MetadataRpc.tablesRef(env));
      this.service = !conf.handsOverToService() ? null : new NodeServiceHandOff(
          ExecutorHandOver.fromConf(conf, conf.sparkConf().getAppId(), env.securityManager()),
          tables,
          env.executorId(), transport.name());
      this.client = new RdmaBlockStoreClient(transport, tables,
          SparkShims.transportConf(conf.sparkConf(), "shuffle", cores),
          env.blockManager().blockStoreClient(), conf.indexCacheSize(),
          conf.verifyChecksums(), env.blockManager().externalShuffleServiceEnabled()
              ? env.blockManager().externalShuffleServicePort() : -1);
      MetadataRpc.registerTransport(env, master, transport.name(), transport.localAddress(),
          this::stats, this::releaseUncommitted);
      this.metrics = RdmaMetricsSource.executor(this::stats);
      env.metricsSystem().registerSource(metrics);
      started = true;
      LOG.info("RDMA shuffle on executor {}: transport {} serving at {}{}", env.executorId(),
          transport.name(), transport.localAddress(), service == null ? ""
              : "; map outputs go to the node service at " + conf.serviceSocket());
    } finally {
      if (!started) {
        transport.close();
      }
    }
  }

  ShuffleTransport transport() {
    return transport;
  }

  RdmaBlockStoreClient client() {
    return client;
  }

  /** What the reader asks about this executor's own outputs before Spark reads them. */
  LocalOutputCheck localCheck() {
    return localCheck;
  }

  /**
   * Checks this executor's own blocks against their checksums (with verifyChecksums), from
   * the registered mappings, counted with the remote blocks in the reader's counters.
   */
  private String localChecksumProblem(String blockId, int shuffleId, long mapId,
      int startReduce, int endReduce) {
    if (!verifyChecksums) {
      return null;
    }
    ReaderStats stats = client.stats();
    long t0 = System.nanoTime();
    PartitionVerifier v = registry.verifyLocal(shuffleId, mapId, startReduce, endReduce);
    if (v == null) {
      stats.checksumSkippedBlocks.incrementAndGet();
      return null;
    }
    String mismatch = v.finish();
    stats.checksumNanos.addAndGet(System.nanoTime() - t0);
    if (mismatch == null) {
      stats.checksumVerifiedBlocks.incrementAndGet();
      stats.checksumVerifiedBytes.addAndGet(v.bytes());
      return null;
    }
    stats.checksumMismatches.incrementAndGet();
    return ChecksumMismatchException.message("local block " + blockId, shuffleId, mapId,
        startReduce, endReduce, "on this executor", mismatch);
  }

  /**
   * Hands a committed map output to the node service, or else registers it here, and
   * publishes it; called before its MapStatus leaves.
   */
  void committed(int shuffleId, long mapId) throws IOException {
    File data = resolver.getDataFile(shuffleId, mapId);
    File index = resolver.getIndexFile(shuffleId, mapId, Option.empty());
    File sums = checksums.file(resolver, shuffleId, mapId);
    if (service != null
        && service.handOver(shuffleId, mapId, data, index, sums, checksums.algorithm())) {
      return;
    }
    MapOutputDescriptor d;
    try {
      d = registry.register(shuffleId, mapId, data, index, sums, checksums.algorithm());
    } catch (IOException e) {
      // Memlock exhausted, a closed transport: the output is still Spark's ordinary files,
      // served by the block manager like the sort shuffle's; failing the task would only
      // make Spark run it again into the same limit.
      long n = registrationFailures.incrementAndGet();
      if (RareLog.due(n)) {
        LOG.warn("map output {} of shuffle {} could not be registered for remote READ ({}); "
            + "its blocks are read through Spark's block transfer service ({} outputs so "
            + "far, registry.registrationFailures)", mapId, shuffleId, e.getMessage(), n);
      }
      return;
    }
    if (d == null) {
      long n = registry.outputsOverCap();
      if (RareLog.due(n)) {
        LOG.warn("map output {} of shuffle {} ({} bytes) is not registered: {} bytes are "
            + "registered and {} caps them; its blocks are read through Spark's block "
            + "transfer service ({} outputs so far, registry.outputsOverCap)", mapId, shuffleId,
            data.length() + index.length(), registry.registeredBytes(),
            RdmaConf.MAX_REGISTERED_BYTES().key(), n);
      }
      return; // nothing published: readers fall back to Spark's client for this output
    }
    tables.publish(d);
  }

  /** The driver saw the attempt that wrote this output fail after its commit. */
  private void releaseUncommitted(int shuffleId, long mapId) {
    if (registry.descriptor(shuffleId, mapId) != null) {
      LOG.info("releasing map output {} of shuffle {}: its task attempt failed after the "
          + "commit, so Spark never tracked it", mapId, shuffleId);
      registry.release(shuffleId, mapId);
    } else if (service != null) {
      service.releaseOutput(shuffleId, mapId); // handed over, if anywhere
    }
  }

  void unregisterShuffle(int shuffleId) {
    tables.forget(shuffleId);
    client.forgetShuffle(shuffleId);
    await(registry.unregisterShuffle(shuffleId), "unregistering shuffle " + shuffleId);
    if (service != null) {
      service.releaseShuffle(shuffleId);
    }
  }

  /**
   * Revokes every registration this executor holds while keeping the files: what a reader
   * sees when an executor lost its registrations (restart, memory pressure). Reads of the
   * old keys fail, Spark reports fetch failures and re-runs the map stage. Tests use it.
   */
  int revokeAll() {
    int n = registry.outputCount();
    await(registry.close(), "revoking all registrations");
    return n;
  }

  Map<String, Long> stats() {
    Map<String, Long> m = new LinkedHashMap<>();
    transport.stats().snapshot().forEach((k, v) -> m.put("transport." + k, v));
    client.stats().addTo(m);
    m.put(RdmaMetrics.REGISTRY_OUTPUTS, (long) registry.outputCount());
    m.put(RdmaMetrics.REGISTRY_REGISTRATIONS, registry.registrations());
    m.put(RdmaMetrics.REGISTRY_BYTES, registry.registeredBytes());
    m.put(RdmaMetrics.REGISTRY_OVER_CAP, registry.outputsOverCap());
    m.put(RdmaMetrics.REGISTRY_FAILURES, registrationFailures.get());
    m.put(RdmaMetrics.REGISTRY_HANDED_OVER, service == null ? 0L : service.handedOver());
    m.put(RdmaMetrics.REGISTRY_NOT_HANDED_OVER, service == null ? 0L : service.notHandedOver());
    m.put(RdmaMetrics.METADATA_TABLE_FETCHES, tables.tableFetches());
    return m;
  }

  @Override
  public void close() {
    SparkEnv env = SparkEnv.get();
    if (env != null) {
      env.metricsSystem().removeSource(metrics);
    }
    await(registry.close(), "releasing registered map outputs");
    transport.close();
    if (service != null) {
      service.close(); // releases nothing: what was handed over outlives the executor
    }
  }

  private static void await(java.util.concurrent.CompletableFuture<Void> f, String what) {
    try {
      f.get(30, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      LOG.warn("{}: regions still in use after 30 s; their mappings stay until serves end", what);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      LOG.warn("{} failed", what, e.getCause());
    }
  }
}
