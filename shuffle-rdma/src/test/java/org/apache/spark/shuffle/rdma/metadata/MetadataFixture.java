/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.spark.SecurityManager;
import org.apache.spark.SecurityManager$;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcEnv$;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * The driver's real metadata endpoints on a real Spark RpcEnv (server mode, loopback) and one
 * executor's client-mode RpcEnv talking to them, as an executor's plugin does: for tests of
 * the reader against a real directory and real tables.
 */
public final class MetadataFixture implements AutoCloseable {
  public final RpcEnv driver;
  public final RpcEnv executor;
  public final RdmaMasterEndpoint master;
  public final RpcEndpointRef masterRef;
  public final RpcEndpointRef tablesRef;
  private final SparkConf conf;
  private final SecurityManager security;
  private final List<RpcEnv> executors = new ArrayList<>();

  /** A mapper executor of its own: a client-mode RpcEnv registered as executor {@code id}. */
  public static final class Executor {
    public final RpcEnv env;
    public final RpcEndpointRef masterRef;
    public final RpcEndpointRef tablesRef;
    public final RpcEndpointRef statsRef;

    Executor(RpcEnv env, RpcEndpointRef masterRef, RpcEndpointRef tablesRef,
        RpcEndpointRef statsRef) {
      this.env = env;
      this.masterRef = masterRef;
      this.tablesRef = tablesRef;
      this.statsRef = statsRef;
    }

    /** This executor's reader view of the tables. */
    public ShuffleTableCache tables() {
      return new ShuffleTableCache(masterRef, tablesRef);
    }
  }

  public MetadataFixture() {
    conf = new SparkConf(false).set("spark.rpc.askTimeout", "30s");
    security = new SecurityManager(conf,
        SecurityManager$.MODULE$.$lessinit$greater$default$2(),
        SecurityManager$.MODULE$.$lessinit$greater$default$3());
    driver = RpcEnv$.MODULE$.create("fixture-driver", "127.0.0.1", 0, conf, security, false);
    master = new RdmaMasterEndpoint(driver);
    driver.setupEndpoint(RdmaMasterEndpoint.NAME(), master);
    driver.setupEndpoint(RdmaTableEndpoint.NAME(), new RdmaTableEndpoint(driver, master, null));
    executor = RpcEnv$.MODULE$.create("fixture-exec", "127.0.0.1", 0, conf, security, true);
    masterRef = executor.setupEndpointRef(driver.address(), RdmaMasterEndpoint.NAME());
    tablesRef = executor.setupEndpointRef(driver.address(), RdmaTableEndpoint.NAME());
  }

  /** Registers executor {@code id} serving at {@code at} (from this fixture's executor env). */
  public void registerExecutor(String id, PeerAddress at) {
    MetadataRpc.registerTransport(masterRef, id, "tcp", at,
        executor.setupEndpoint("rdma-shuffle-executor-" + id,
            new RdmaExecutorEndpoint(executor, Collections::emptyMap, (s, m) -> { })));
  }

  /**
   * Executor {@code id} on a client-mode RpcEnv of its own (closed with the fixture),
   * registered with the driver as serving at {@code at}.
   */
  public Executor addExecutor(String id, PeerAddress at) {
    RpcEnv env = RpcEnv$.MODULE$.create("exec-" + id, "127.0.0.1", 0, conf, security, true);
    executors.add(env);
    RpcEndpointRef master = env.setupEndpointRef(driver.address(), RdmaMasterEndpoint.NAME());
    RpcEndpointRef stats = env.setupEndpoint("rdma-shuffle-executor-" + id,
        new RdmaExecutorEndpoint(env, Collections::emptyMap, (s, m) -> { }));
    MetadataRpc.registerTransport(master, id, "tcp", at, stats);
    return new Executor(env, master,
        env.setupEndpointRef(driver.address(), RdmaTableEndpoint.NAME()), stats);
  }

  /** A descriptor of one 1 GiB output in one region, at fixed addresses and keys. */
  public static MapOutputDescriptor sampleOutput(int shuffleId, long mapId, String executorId,
      int partitions) {
    return new MapOutputDescriptor(shuffleId, mapId, executorId, partitions, 0x7f0000000000L,
        0x1234, 100, 1L << 30, new long[] {0x7e0000000000L}, new int[] {0x5678});
  }

  /** The driver's side of registerShuffle. */
  public void registerShuffle(int shuffleId, int numPartitions) {
    master.shuffleRegistered(shuffleId, numPartitions);
  }

  /** Publishes a map output as its executor does once the output is committed. */
  public void publish(MapOutputDescriptor d) {
    MetadataRpc.publish(masterRef, d.shuffleId(), d.mapId(), DescriptorCodec.encodeEntry(d));
  }

  /** A reader's view of the tables, as each executor holds one. */
  public ShuffleTableCache tables() {
    return new ShuffleTableCache(masterRef, tablesRef);
  }

  @Override
  public void close() {
    List<RpcEnv> all = new ArrayList<>(executors);
    all.add(executor);
    all.add(driver);
    for (RpcEnv e : all) {
      e.shutdown();
      e.awaitTermination();
    }
  }
}
