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
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.fdpass.UnixServerSocket;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;

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
  /**
   * The application id of the shared tcp transport (applications without authentication,
   * whose readers present none).
   */
  static final String SERVICE_APP_ID = "shuffle-rdma-node-service";

  /** The shared transport (tcp); null on verbs. */
  private final ShuffleTransport transport;
  private final ServedOutputs outputs;
  private final HandOverServer server;
  private final ServiceLog log;
  private final java.util.concurrent.ScheduledExecutorService leaseProbe;

  NodeService(ServiceArgs args, ServiceLog log) throws IOException {
    this(args, log, null);
  }

  /** @param chosen the transports (tests), or null: as --transport says */
  NodeService(ServiceArgs args, ServiceLog log, ServiceTransports chosen) throws IOException {
    this.log = log;
    SparkConf conf = new SparkConf(false);
    for (Map.Entry<String, String> e : args.conf.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    String host = args.hostOrDefault(log::info);
    RdmaShuffleConf rdma = new RdmaShuffleConf(conf);
    DriverLeases leases = new DriverLeases(rdma.serviceDriverTimeoutMs(),
        rdma.serviceDriverGoneTimeoutMs(), rdma.serviceDriverProbeIntervalMs(), log);
    ServiceTransports transports = chosen != null ? chosen
        : ServiceTransports.choose(args, host, log);
    // tcp: one transport for applications without authentication; verbs: none shared, each
    // application its own (its own protection domain).
    this.transport = transports.perApplication() ? null : transports.openShared(args.port);
    NodeBudget budget = new NodeBudget(args.maxRegisteredBytes, args.appSharePercent);
    this.outputs = new ServedOutputs(transport, transports::open, rdma.regionSize(), leases,
        budget, log);
    Set<Integer> uids = new TreeSet<>(args.allowUids);
    uids.add(0);
    uids.add(currentUid());
    UnixServerSocket socket;
    try {
      socket = UnixServerSocket.listen(args.socket, 64);
    } catch (IOException e) {
      if (transport != null) {
        transport.close();
      }
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
    // Each lease is checked when due: every probe interval, more often while it refuses.
    long tick = leases.tickMs();
    leaseProbe.scheduleWithFixedDelay(this::probeDrivers, tick, tick,
        java.util.concurrent.TimeUnit.MILLISECONDS);
    log.ready(READY + " socket=" + args.socket + " transport=" + transports.kind()
        + " address=" + (transport != null ? transport.localAddress().toString()
            : "per-application") + " pid=" + ProcessHandle.current().pid()
        + " driver-timeout=" + leases.timeoutMs() + "ms"
        + " driver-gone-timeout=" + leases.goneTimeoutMs() + "ms"
        + " max-registered-bytes=" + budget.max() + " app-max=" + budget.appMax()
        + " allowed-uids=" + uids);
  }

  private void probeDrivers() {
    try {
      outputs.probeDrivers();
    } catch (RuntimeException e) {
      log.info("driver lease check failed, next round goes on: " + e);
    }
  }

  /**
   * Where readers of applications without authentication read (the shared transport); null
   * on verbs, where each application has its own.
   */
  PeerAddress sharedAddress() {
    return transport == null ? null : transport.localAddress();
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
    if (transport != null) {
      transport.close();
    }
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
