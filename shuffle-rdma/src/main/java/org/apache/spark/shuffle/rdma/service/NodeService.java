/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.fdpass.UnixServerSocket;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;

/**
 * The node service (bin/shuffle-rdma-service): one long-running process per node that takes
 * committed map outputs from the executors of its node over a Unix socket (their files as
 * passed descriptors) and serves them to readers on its own transport, so they outlive the
 * executor that wrote them. Runs in the foreground, logs to stdout, prints one line starting
 * with {@link #READY} when it takes requests, and stops on SIGTERM (releasing everything and
 * removing its socket file). See docs/node-service.md.
 */
public final class NodeService implements Closeable {
  public static final String READY = "shuffle-rdma-service ready:";
  /** The transport's application id: readers present none to this service yet (part 1). */
  static final String SERVICE_APP_ID = "shuffle-rdma-node-service";

  private final ShuffleTransport transport;
  private final ServedOutputs outputs;
  private final HandOverServer server;
  private final ServiceLog log;
  private final java.util.concurrent.ScheduledExecutorService leaseProbe;

  NodeService(ServiceArgs args, ServiceLog log) throws IOException {
    this.log = log;
    if (args.transport.equals("verbs")) {
      throw new IllegalArgumentException("--transport verbs: the node service serves over "
          + "tcp only in this version (verbs needs a protection domain per application, not "
          + "built yet); use --transport tcp or auto");
    }
    if (args.transport.equals("auto")) {
      log.info("transport auto: tcp (the node service's verbs transport is not built yet)");
    }
    SparkConf conf = new SparkConf(false);
    for (Map.Entry<String, String> e : args.conf.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    String host = args.hostOrDefault();
    conf.set(RdmaConf.PORT().key(), Integer.toString(args.port));
    RdmaShuffleConf rdma = new RdmaShuffleConf(conf);
    int cores = Runtime.getRuntime().availableProcessors();
    this.transport = new TcpTransport(new TransportSettings(rdma, host, null, SERVICE_APP_ID,
        cores));
    DriverLeases leases;
    try {
      leases = new DriverLeases(rdma.serviceDriverTimeoutMs(),
          rdma.serviceDriverProbeIntervalMs(), log);
    } catch (IllegalArgumentException e) {
      transport.close();
      throw e;
    }
    NodeBudget budget = new NodeBudget(args.maxRegisteredBytes, args.appSharePercent);
    ServedOutputs.AppTransports appTransports = (appId, secret, encryption) ->
        appTransport(args, host, appId, secret, encryption);
    this.outputs = new ServedOutputs(transport, appTransports, rdma.regionSize(), leases,
        budget, log);
    Set<Integer> uids = new TreeSet<>(args.allowUids);
    uids.add(0);
    uids.add(currentUid());
    UnixServerSocket socket;
    try {
      socket = UnixServerSocket.listen(args.socket, 64);
    } catch (IOException e) {
      transport.close();
      throw e;
    }
    this.server = new HandOverServer(socket, outputs, uids, args.maxConnections, log);
    server.start();
    // One thread checks every application's driver, one round per interval (DriverLeases).
    this.leaseProbe = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "node-service-driver-leases");
      t.setDaemon(true);
      return t;
    });
    long interval = rdma.serviceDriverProbeIntervalMs();
    leaseProbe.scheduleWithFixedDelay(this::probeDrivers, interval, interval,
        java.util.concurrent.TimeUnit.MILLISECONDS);
    log.ready(READY + " socket=" + args.socket + " transport=" + transport.name()
        + " address=" + transport.localAddress() + " pid=" + ProcessHandle.current().pid()
        + " driver-timeout=" + leases.timeoutMs() + "ms"
        + " max-registered-bytes=" + budget.max() + " app-max=" + budget.appMax()
        + " allowed-uids=" + uids);
  }

  /**
   * The transport of one application that authenticates (spark.authenticate): the service's
   * settings, any free port, and Spark's own authentication with the application's secret
   * and wire encryption, so its readers connect to it as to an executor of theirs. At most two
   * Netty threads each: the service may hold many.
   */
  private static ShuffleTransport appTransport(ServiceArgs args, String host, String appId,
      String secret, int encryption) throws IOException {
    SparkConf conf = new SparkConf(false);
    for (Map.Entry<String, String> e : args.conf.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    org.apache.spark.internal.config.package$ spark =
        org.apache.spark.internal.config.package$.MODULE$;
    conf.set(RdmaConf.PORT().key(), "0");
    conf.set("spark.app.id", appId);
    conf.set(spark.NETWORK_AUTH_ENABLED().key(), "true");
    conf.set(spark.AUTH_SECRET().key(), secret);
    conf.set(org.apache.spark.internal.config.Network$.MODULE$.NETWORK_CRYPTO_ENABLED().key(),
        Boolean.toString((encryption & HandOverRequest.NETWORK_CRYPTO) != 0));
    conf.set(spark.SASL_ENCRYPTION_ENABLED().key(),
        Boolean.toString((encryption & HandOverRequest.SASL_ENCRYPTION) != 0));
    org.apache.spark.SecurityManager security = new org.apache.spark.SecurityManager(conf,
        scala.Option.empty(), spark.AUTH_SECRET_FILE());
    int cores = Math.min(2, Runtime.getRuntime().availableProcessors());
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(conf), host, security,
        appId, cores));
  }

  private void probeDrivers() {
    try {
      outputs.probeDrivers();
    } catch (RuntimeException e) {
      log.info("driver lease check failed, next round goes on: " + e);
    }
  }

  /** Where readers of applications without authentication read (the shared transport). */
  PeerAddress sharedAddress() {
    return transport.localAddress();
  }

  /** This process's uid (the owner of /proc/self). */
  private static int currentUid() throws IOException {
    return (Integer) java.nio.file.Files.getAttribute(java.nio.file.Paths.get("/proc/self"),
        "unix:uid");
  }

  @Override
  public void close() {
    leaseProbe.shutdownNow();
    server.close();
    outputs.close();
    transport.close();
    log.info("shuffle-rdma-service stopped");
  }

  public static void main(String[] argv) throws Exception {
    System.exit(run(argv, System.out, System.err));
  }

  static int run(String[] argv, PrintStream out, PrintStream err) throws InterruptedException {
    ServiceArgs args;
    try {
      args = ServiceArgs.parse(argv);
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage());
      return 2;
    }
    if (args.help) {
      out.println(ServiceArgs.USAGE);
      return 0;
    }
    ServiceLog log = new ServiceLog(out);
    NodeService service;
    try {
      service = new NodeService(args, log);
    } catch (IOException | IllegalArgumentException e) {
      err.println("shuffle-rdma-service cannot start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      service.close();
      stopped.countDown();
    }, "node-service-stop"));
    stopped.await(); // until SIGTERM / SIGINT
    return 0;
  }
}
