/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.util.Map;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.rdma.compat.SparkShims;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.metadata.MetadataRpc;
import org.apache.spark.shuffle.rdma.metadata.RdmaMasterEndpoint;
import org.apache.spark.shuffle.rdma.reader.RdmaShuffleReader;
import org.apache.spark.shuffle.rdma.writer.RegisteringShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Iterator;
import scala.collection.Seq;

/**
 * Spark shuffle manager that serves map outputs from registered memory and fetches remote
 * shuffle blocks with one-sided reads (RDMA READ, or its tcp emulation).
 *
 * <p>Set {@code spark.shuffle.manager=org.apache.spark.shuffle.rdma.RdmaShuffleManager}.
 * Writers, handles, files and local reads stay Spark's sort shuffle; this class adds the
 * registration after each map commit and swaps the remote fetch path.
 */
public class RdmaShuffleManager extends SortShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaShuffleManager.class);

  private final RdmaShuffleConf rdmaConf;
  private final boolean isDriver;
  /** The driver's metadata endpoint, started on first need (see {@link #master()}). */
  private volatile RdmaMasterEndpoint master;
  private volatile ExecutorRuntime runtime;
  private volatile boolean stopped;
  /**
   * The driver's client of the node service of its own host (when the socket exists there):
   * releases what executors handed over when Spark unregisters a shuffle or the application
   * ends, also when no executor is left to do it. Null until first needed, or on executors.
   */
  private ExecutorHandOver driverService; // guarded by serviceLock
  private final Object serviceLock = new Object();

  static final String OLD_FETCH_PROTOCOL = "spark.shuffle.useOldFetchProtocol";
  static final String PUSH_ENABLED = "spark.shuffle.push.enabled";
  static final String HOST_LOCAL_DISK = "spark.shuffle.readHostLocalDisk";

  public RdmaShuffleManager(SparkConf conf, boolean isDriver) {
    super(supported(conf, isDriver));
    // Validates every spark.shuffle.rdma.* key now, so a bad value fails the application
    // (or executor) at startup with the key's name, not at the first shuffle.
    this.rdmaConf = new RdmaShuffleConf(conf);
    this.isDriver = isDriver;
    if (isDriver && rdmaConf.handsOverToService()
        && !RdmaShuffleDataIO.class.getName().equals(
            conf.get(RdmaShuffleDataIO.PLUGIN_CLASS_KEY, ""))) {
      LOG.warn("{} is set but {} is not {}: executors hand their map outputs to the node "
          + "service, yet Spark unregisters an executor's outputs when it loses the "
          + "executor and dynamic allocation still needs shuffle tracking "
          + "(docs/node-service.md)", RdmaConf.SERVICE_SOCKET().key(),
          RdmaShuffleDataIO.PLUGIN_CLASS_KEY, RdmaShuffleDataIO.class.getName());
    }
  }

  public RdmaShuffleManager(SparkConf conf) {
    this(conf, false);
  }

  /**
   * Refuses or turns off the Spark features this manager cannot serve, before anything
   * starts, with one clear message each (docs/compatibility.md):
   * <ul>
   * <li>{@code spark.shuffle.useOldFetchProtocol=true}: refused. It numbers map outputs by
   *     partition instead of by task attempt, so a re-run map task would replace a
   *     registration that readers may still hold; it exists only for external shuffle
   *     services of Spark 2.x, which this manager does not talk to.
   * <li>{@code spark.shuffle.push.enabled=true}: turned off for this application (one
   *     warning on the driver). Push-based shuffle merges blocks in external shuffle
   *     services; this manager reads map outputs from executors' memory, so mappers would
   *     push for nothing and reducers would never read the merged blocks.
   * </ul>
   */
  private static SparkConf supported(SparkConf conf, boolean isDriver) {
    String running = org.apache.spark.package$.MODULE$.SPARK_VERSION();
    if (!running.startsWith(SparkShims.LINE + ".")) {
      throw new IllegalStateException("this " + RdmaShuffleManager.class.getSimpleName()
          + " jar is built for Spark " + SparkShims.LINE + ".x but runs on Spark " + running
          + ": use the shuffle-rdma jar of your Spark line and Scala version "
          + "(docs/compatibility.md)");
    }
    if (conf.getBoolean(OLD_FETCH_PROTOCOL, false)) {
      throw new IllegalArgumentException(OLD_FETCH_PROTOCOL + "=true is not supported by "
          + RdmaShuffleManager.class.getName() + ": it numbers map outputs by partition, so "
          + "a re-run map task would replace a registration readers may hold. It is only "
          + "needed with an external shuffle service of Spark 2.x; remove it, or use "
          + "spark.shuffle.manager=sort.");
    }
    if (conf.getBoolean(PUSH_ENABLED, false)) {
      // The SparkConf Spark gave us is the application's own: DAGScheduler, BlockManager
      // and every ShuffleDependency read it after this point.
      conf.set(PUSH_ENABLED, "false");
      if (isDriver) {
        LOG.warn("{}=true is ignored: {} reads map outputs from executors' registered memory, "
            + "so push-based shuffle is turned off for this application", PUSH_ENABLED,
            RdmaShuffleManager.class.getSimpleName());
      }
    }
    if (new RdmaShuffleConf(conf).handsOverToService()
        && conf.getBoolean(HOST_LOCAL_DISK, true)) {
      // A reducer on the host of an executor Spark removed would read its blocks from that
      // executor's directories, deleted when it stopped; the node service still serves them
      // from the descriptors it holds, so they are read through the transport instead.
      conf.set(HOST_LOCAL_DISK, "false");
      if (isDriver) {
        LOG.info("{}=false: with the node service, blocks of other executors on this host are "
            + "read from the service, not from their files (which go with their executor)",
            HOST_LOCAL_DISK);
      }
    }
    return conf;
  }

  RdmaShuffleConf rdmaConf() {
    return rdmaConf;
  }

  /**
   * The driver's metadata endpoint, started the first time a shuffle is registered. Not in
   * the constructor: Spark 3.5 builds the shuffle manager inside SparkEnv.create, before
   * SparkEnv (and its RpcEnv) can be reached; Spark 4 builds it later. Either way every
   * shuffle is registered on the driver before any of its tasks runs, so executors always
   * find the endpoint. Null on executors.
   */
  private RdmaMasterEndpoint master() {
    if (!isDriver) {
      return null;
    }
    RdmaMasterEndpoint m = master;
    if (m != null) {
      return m;
    }
    synchronized (this) {
      if (master == null) {
        if (stopped) {
          throw new IllegalStateException("RDMA shuffle manager is stopped");
        }
        SparkEnv env = SparkEnv.get();
        if (env == null) {
          throw new IllegalStateException("RDMA shuffle manager: SparkEnv is not ready yet");
        }
        RdmaMasterEndpoint started =
            MetadataRpc.startMaster(env, RdmaMetricsSource.newClusterTotals());
        master = started;
        // Cluster-wide sums in the driver's metrics (docs/metrics.md): the driver is where
        // Spark's PrometheusServlet and most dashboards look. Counters keep removed
        // executors' last counts, so they do not fall under dynamic allocation.
        env.metricsSystem().registerSource(
            RdmaMetricsSource.clusterTotals(() -> MetadataRpc.clusterTotals(started)));
        LOG.info("RDMA shuffle manager started on the driver (transport={})",
            rdmaConf.transport());
      }
      return master;
    }
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(int shuffleId,
      ShuffleDependency<K, V, C> dependency) {
    // The driver's master accepts descriptors of this shuffle with exactly this many
    // partitions (a reader allocates 8 bytes per partition for an output's index).
    RdmaMasterEndpoint m = master();
    if (m != null) {
      m.shuffleRegistered(shuffleId, dependency.partitioner().numPartitions());
    }
    // Push-based shuffle is off (see supported()); on Spark 4 the dependency has already
    // decided, so make sure it agrees.
    dependency.setShuffleMergeAllowed(false);
    return super.registerShuffle(shuffleId, dependency);
  }

  private ExecutorRuntime runtime() {
    ExecutorRuntime r = runtime;
    if (r != null) {
      return r;
    }
    synchronized (this) {
      if (stopped) {
        throw new IllegalStateException("RDMA shuffle manager is stopped");
      }
      if (runtime == null) {
        try {
          runtime = new ExecutorRuntime(rdmaConf,
              (IndexShuffleBlockResolver) shuffleBlockResolver());
        } catch (IOException e) {
          throw new IllegalStateException("RDMA shuffle cannot start on executor "
              + SparkEnv.get().executorId() + ": " + e.getMessage(), e);
        }
      }
      return runtime;
    }
  }

  @Override
  public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId,
      TaskContext context, ShuffleWriteMetricsReporter metrics) {
    ExecutorRuntime r = runtime();
    ShuffleWriter<K, V> spark = super.getWriter(handle, mapId, context, metrics);
    return new RegisteringShuffleWriter<>(spark, handle.shuffleId(), mapId, r::committed);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex,
      int endMapIndex, int startPartition, int endPartition, TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    ExecutorRuntime r = runtime();
    BaseShuffleHandle<K, ?, C> base = (BaseShuffleHandle<K, ?, C>) handle;
    // Always the unmerged map outputs: push-based shuffle is off under this manager.
    Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> blocks =
        SparkEnv.get().mapOutputTracker().getMapSizesByExecutorId(handle.shuffleId(),
            startMapIndex, endMapIndex, startPartition, endPartition);
    boolean batch = SortShuffleManager.canUseBatchFetch(startPartition, endPartition, context);
    return new RdmaShuffleReader<>(base, (Iterator) blocks, context, metrics, r.client(), batch,
        r.localCheck());
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    ExecutorRuntime r = runtime;
    if (r != null) {
      r.unregisterShuffle(shuffleId);
    }
    RdmaMasterEndpoint m = master;
    if (m != null) {
      m.forget(shuffleId);
    }
    releaseInService("shuffle " + shuffleId, s -> s.releaseShuffle(shuffleId));
    return super.unregisterShuffle(shuffleId);
  }

  @Override
  public void stop() {
    // The application ends (the driver's manager stops only then): what its executors handed
    // to the service of this host goes. Services of other hosts release it by RELEASE_SHUFFLE
    // from their executors, or when their lease on this driver ends (docs/node-service.md).
    releaseInService("the application", ExecutorHandOver::releaseApp);
    synchronized (this) {
      stopped = true;
      if (runtime != null) {
        runtime.close();
        runtime = null;
      }
    }
    synchronized (serviceLock) {
      if (driverService != null) {
        driverService.close();
        driverService = null;
      }
    }
    super.stop();
  }

  /**
   * Driver only: sends a release to the node service of the driver's host, when the socket
   * is configured and exists here.
   */
  private void releaseInService(String what,
      java.util.function.Function<ExecutorHandOver, HandOverAnswer> release) {
    if (!isDriver || rdmaConf.serviceSocket().isEmpty()) {
      return;
    }
    // Not under this: a release waits for the service's serves of the outputs to end.
    synchronized (serviceLock) {
      if (driverService == null) {
        SparkEnv env = SparkEnv.get();
        if (env == null || stopped) {
          return;
        }
        driverService = ExecutorHandOver.fromConf(rdmaConf, env.conf().getAppId(),
            env.securityManager());
      }
      if (!driverService.serviceSocketExists()) {
        return; // no node service on the driver's host
      }
      HandOverAnswer a = release.apply(driverService);
      if (a == null) {
        LOG.warn("{} not released in the node service: {}", what, driverService.lastProblem());
      } else if (a.releasedOutputs() > 0) {
        LOG.info("node service released {}: {} map outputs, {} bytes", what,
            a.releasedOutputs(), a.releasedBytes());
      }
    }
  }

  /**
   * Revokes every registration of this executor, keeping the files (fault injection for
   * tests: readers must fail cleanly and Spark must recompute). Returns outputs revoked.
   */
  public int revokeAllRegistrations() {
    ExecutorRuntime r = runtime;
    return r == null ? 0 : r.revokeAll();
  }

  /** This JVM's counters, or an empty map before its first shuffle task. */
  public Map<String, Long> localStats() {
    ExecutorRuntime r = runtime;
    return r == null ? Map.of() : r.stats();
  }

  /**
   * Counters of every executor of the application, by executor id (driver only): what the
   * tests and the demo use to show which transport moved the blocks.
   */
  public static Map<String, Map<String, Long>> clusterStats() {
    SparkEnv env = SparkEnv.get();
    if (!(env.shuffleManager() instanceof RdmaShuffleManager)) {
      throw new IllegalStateException("the shuffle manager is " + env.shuffleManager()
          + ", not " + RdmaShuffleManager.class.getSimpleName());
    }
    RdmaMasterEndpoint m = ((RdmaShuffleManager) env.shuffleManager()).master();
    if (m == null) {
      throw new IllegalStateException("clusterStats() is for the driver");
    }
    return MetadataRpc.clusterStats(m);
  }
}
