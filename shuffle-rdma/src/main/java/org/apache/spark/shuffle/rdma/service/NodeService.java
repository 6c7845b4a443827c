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
 * with {@link #READY} when it takes requests, and stops on SIGTERM (removing its socket
 * file; the outputs stay in its state directory, and its next start serves them again under
 * the same port and keys). See docs/node-service.md.
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
  /** The state kept across restarts; null: none (--state-dir none, verbs). */
  private final DurableOutputs durable;

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
    Set<Integer> uids = new TreeSet<>(args.allowUids);
    uids.add(0);
    uids.add(currentUid());
    // The socket first: a live service at this path refuses the start before its state
    // directory is touched (one process owns it). Nothing is accepted until server.start().
    UnixServerSocket socket = UnixServerSocket.listen(args.socket, 64);
    try {
      // Only the shared tcp transport's outputs are kept: verbs' keys are the device's, and
      // an application with its own transport would need its secret on disk.
      this.durable = transports.perApplication() || args.stateDir() == null ? null
          : new DurableOutputs(args.stateDir(), currentUid(), log);
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
    if (durable == null && args.stateDir() != null) {
      log.info("state: nothing is kept across restarts on " + transports.kind()
          + " (verbs registrations get new keys); the state directory is not used");
    }
    // tcp: one transport for applications without authentication; verbs: none shared, each
    // application its own (its own protection domain). Restarted, the port readers were told.
    int port = args.port != 0 || durable == null ? args.port : durable.port();
    try {
      this.transport = transports.perApplication() ? null : transports.openShared(port);
    } catch (IOException | RuntimeException e) {
      socket.close();
      closeState();
      if (port != args.port) {
        throw new IOException("the port readers were told, " + port + " (recorded in "
            + durable.dir() + "), is taken: " + e.getMessage() + "; free it, or start with "
            + "--port N (readers then lose the kept outputs)", e);
      }
      throw e;
    }
    NodeBudget budget = new NodeBudget(args.maxRegisteredBytes, args.appSharePercent);
    this.outputs = new ServedOutputs(transport, transports::open, rdma.regionSize(), leases,
        budget, log, durable);
    int restored = 0;
    if (durable != null) {
      long t0 = System.nanoTime();
      try {
        durable.port(transport.localAddress().port());
      } catch (IOException e) {
        socket.close();
        outputs.close();
        transport.close();
        closeState();
        throw e;
      }
      restored = outputs.restore();
      log.info("state " + durable.dir() + ": " + restored + " outputs served again in "
          + (System.nanoTime() - t0) / 1_000_000 + " ms; " + outputs.stats());
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
        + " allowed-uids=" + uids
        + " state=" + (durable != null ? durable.dir() : "none") + " restored=" + restored);
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
    closeState();
    log.info("shuffle-rdma-service stopped" + (durable != null ? "; its outputs are kept in "
        + durable.dir() + " for its next start (since this start " + durable.kept()
        + " hand-overs kept, " + durable.notKept() + " served without being kept)" : ""));
  }

  private void closeState() {
    if (durable != null) {
      try {
        durable.close();
      } catch (IOException e) {
        log.info("state: closing the journal failed: " + e.getMessage());
      }
    }
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
