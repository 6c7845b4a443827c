/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;

/**
 * An executor's hand-over of committed map outputs to its node's service
 * (spark.shuffle.rdma.service.socket), with the same inputs as MapOutputRegistry.register so
 * the executor can call one or the other (ExecutorRuntime calls this first, docs/node-service.md).
 * A refusal or an unreachable service is no failure of the task: the call returns null with
 * {@link #lastProblem()} set, and the executor registers the output itself; the next call
 * connects again. The driver uses one too, for the releases (RELEASE_SHUFFLE, RELEASE_APP).
 * Each new connection first names the application's driver (APP_DRIVER), whose liveness the
 * service watches to end the application's outputs when the driver is gone (the lease), and
 * with spark.authenticate proves the application with its secret (APP_AUTH): the service
 * then serves its outputs on a transport that authenticates readers with that secret. A
 * service that does not take the secret gets nothing of this application.
 */
public final class ExecutorHandOver implements Closeable {
  private final Path socket;
  private final String appId;
  private final int timeoutMs;
  /** The driver's address executors reach (spark.driver.host/port); null: none announced. */
  private final String driverHost;
  private final int driverPort;
  /** spark.authenticate: the application's secret and network crypto; null: none. */
  private final String secret;
  private final int encryption;
  private HandOverClient client; // guarded by this; null until connected or after a failure
  private String lastProblem;
  /** The service's lease from the last APP_DRIVER answer (ms), or -1 when it took none. */
  private volatile long leaseMs = -1;
  private volatile String leaseProblem;
  private final AtomicLong handedOver = new AtomicLong();
  private final AtomicLong notHandedOver = new AtomicLong();

  public ExecutorHandOver(Path socket, String appId, int timeoutMs) {
    this(socket, appId, timeoutMs, null, 0);
  }

  public ExecutorHandOver(Path socket, String appId, int timeoutMs, String driverHost,
      int driverPort) {
    this(socket, appId, timeoutMs, driverHost, driverPort, null, 0);
  }

  /**
   * @param secret the application's secret with spark.authenticate, else null
   * @param encryption HandOverRequest.NETWORK_CRYPTO and/or SASL_ENCRYPTION, as the
   *     application's readers connect
   */
  public ExecutorHandOver(Path socket, String appId, int timeoutMs, String driverHost,
      int driverPort, String secret, int encryption) {
    this.socket = socket;
    this.appId = appId;
    this.timeoutMs = timeoutMs;
    this.driverHost = driverHost;
    this.driverPort = driverPort;
    this.secret = secret;
    this.encryption = encryption;
  }

  /**
   * The hand-over configured by spark.shuffle.rdma.service.socket, or null when unset; it
   * announces the driver Spark's configuration names (spark.driver.host, spark.driver.port),
   * and with spark.authenticate the application's secret from {@code security}.
   */
  public static ExecutorHandOver fromConf(RdmaShuffleConf conf, String appId,
      org.apache.spark.SecurityManager security) {
    String path = conf.serviceSocket();
    if (path.isEmpty()) {
      return null;
    }
    org.apache.spark.SparkConf spark = conf.sparkConf();
    String host = spark.get(org.apache.spark.internal.config.package$.MODULE$
        .DRIVER_HOST_ADDRESS().key(), null);
    int port = spark.getInt(org.apache.spark.internal.config.package$.MODULE$
        .DRIVER_PORT().key(), 0);
    boolean auth = security != null && security.isAuthenticationEnabled();
    int encryption = 0;
    if (auth && spark.getBoolean(org.apache.spark.internal.config.Network$.MODULE$
        .NETWORK_CRYPTO_ENABLED().key(), false)) {
      encryption |= HandOverRequest.NETWORK_CRYPTO;
    }
    if (auth && spark.getBoolean(org.apache.spark.internal.config.package$.MODULE$
        .SASL_ENCRYPTION_ENABLED().key(), false)) {
      encryption |= HandOverRequest.SASL_ENCRYPTION;
    }
    return new ExecutorHandOver(Paths.get(path), appId, (int) Math.min(Integer.MAX_VALUE,
        conf.readTimeoutMs()), host != null && port > 0 ? host : null, port,
        auth ? security.getSecretKey() : null, encryption);
  }

  /** The connection, opened (and the application declared on it) when there is none. */
  private HandOverClient client() throws IOException {
    if (client == null) {
      HandOverClient c = HandOverClient.connect(socket, timeoutMs);
      try {
        declare(c);
      } catch (IOException e) {
        c.close();
        throw e;
      }
      client = c;
    }
    return client;
  }

  /**
   * Names the driver (a service that refuses it, an older one, still takes outputs, without a
   * lease) and proves the application's secret (a service that refuses that gets nothing).
   */
  private void declare(HandOverClient c) throws IOException {
    if (driverHost != null) {
      HandOverAnswer a = c.appDriver(appId, driverHost, driverPort);
      leaseMs = a.isRefused() ? -1 : a.leaseMs();
      leaseProblem = a.isRefused() ? a.refusal() : null;
    }
    if (secret != null) {
      HandOverAnswer a = c.appAuth(appId, secret, encryption);
      if (a.isRefused()) {
        throw new IOException("it did not take this application's authentication "
            + "(spark.authenticate), so it could not make readers authenticate: "
            + a.refusal());
      }
    }
  }

  /**
   * The service's lease on this application (ms its outputs outlive an unreachable driver),
   * or -1 before the first connection, without a driver, or when the service took none.
   */
  public long leaseMs() {
    return leaseMs;
  }

  /** Why the service took no lease (its refusal of APP_DRIVER), or null. */
  public String leaseProblem() {
    return leaseProblem;
  }

  /**
   * Hands one committed output over. The checksum file goes along when {@code algorithm} is
   * not NONE and it holds one long per partition (as MapOutputRegistry decides); otherwise
   * the descriptor says NONE.
   *
   * @return the service's answer (descriptor and the address readers reach it at), or null
   *     when the service refused or could not be reached ({@link #lastProblem()} says why)
   */
  public synchronized HandOverAnswer handOver(int shuffleId, long mapId, File dataFile,
      File indexFile, File checksumFile, ChecksumAlgorithm algorithm) {
    long indexLength = indexFile.length();
    int partitions = (int) Math.max(0, indexLength / 8 - 1);
    boolean withChecksums = algorithm != ChecksumAlgorithm.NONE && checksumFile != null
        && partitions > 0 && checksumFile.length() == 8L * partitions;
    try {
      HandOverAnswer a = client().handOver(appId, shuffleId, mapId, partitions,
          dataFile.toPath(), indexFile.toPath(),
          withChecksums ? checksumFile.toPath() : null,
          withChecksums ? algorithm : ChecksumAlgorithm.NONE);
      if (a.isRefused()) {
        return notHandedOver("the node service refused shuffle " + shuffleId + " map "
            + mapId + ": " + a.refusal());
      }
      handedOver.incrementAndGet();
      return a;
    } catch (IOException e) {
      if (client != null) {
        client.close();
        client = null; // connect again next time (a restarted service)
      }
      return notHandedOver("the node service at " + socket + " could not take shuffle "
          + shuffleId + " map " + mapId + ": " + e.getMessage());
    }
  }

  /**
   * Releases every output of shuffle {@code shuffleId} this application handed to the
   * service, from any executor. Returns the answer, or null when the service refused or
   * could not be reached ({@link #lastProblem()}); releasing nothing is an answer of 0.
   */
  public synchronized HandOverAnswer releaseShuffle(int shuffleId) {
    return release("shuffle " + shuffleId, c -> c.releaseShuffle(appId, shuffleId));
  }

  /** Releases one output this application handed to the service (see releaseShuffle). */
  public synchronized HandOverAnswer releaseOutput(int shuffleId, long mapId) {
    return release("shuffle " + shuffleId + " map " + mapId,
        c -> c.releaseOutput(appId, shuffleId, mapId));
  }

  /** Releases every output this application handed to the service (see releaseShuffle). */
  public synchronized HandOverAnswer releaseApp() {
    return release("application " + appId, c -> c.releaseApp(appId));
  }

  public Path serviceSocket() {
    return socket;
  }

  /** Whether the socket file exists: a host without a node service has none. */
  public boolean serviceSocketExists() {
    return java.nio.file.Files.exists(socket);
  }

  private interface Call {
    HandOverAnswer on(HandOverClient c) throws IOException;
  }

  private HandOverAnswer release(String what, Call call) {
    try {
      HandOverAnswer a = call.on(client());
      if (a.isRefused()) {
        lastProblem = "the node service refused to release " + what + ": " + a.refusal();
        return null;
      }
      return a;
    } catch (IOException e) {
      if (client != null) {
        client.close();
        client = null;
      }
      lastProblem = "the node service at " + socket + " could not release " + what + ": "
          + e.getMessage();
      return null;
    }
  }

  private HandOverAnswer notHandedOver(String problem) {
    lastProblem = problem;
    notHandedOver.incrementAndGet();
    return null;
  }

  /** Why the last output was not handed over, or null. */
  public synchronized String lastProblem() {
    return lastProblem;
  }

  /** Outputs handed over (a counter). */
  public long handedOver() {
    return handedOver.get();
  }

  /** Outputs not handed over: refused or service unreachable (a counter). */
  public long notHandedOver() {
    return notHandedOver.get();
  }

  @Override
  public synchronized void close() {
    if (client != null) {
      client.close();
      client = null;
    }
  }
}
