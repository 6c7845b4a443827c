/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverProtocol.Kind;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;

/**
 * Every map output the node service serves, per application, and answers each request.
 * On tcp applications without authentication share the service's transport; on verbs each
 * application has a transport of its own (its own protection domain). One that proved itself
 * with its secret (APP_AUTH, spark.authenticate) gets a transport of its own on either, which
 * authenticates readers with that secret, and only connections that presented the secret may
 * hand over or release its outputs. Requests of different applications run in parallel;
 * those of one application one at a time.
 */
final class ServedOutputs {
  /**
   * At most this many applications with a transport of their own (a port and threads each;
   * on verbs a protection domain, a completion queue and a pinned receive pool too).
   */
  static final int MAX_OWN_TRANSPORTS = 256;

  /** Opens an application's own transport; {@code secret} null: without authentication. */
  interface AppTransports {
    ShuffleTransport open(String appId, String secret, int encryption) throws IOException;
  }

  /** The transport of applications without authentication; null: each has its own (verbs). */
  private final ShuffleTransport shared;
  private final AppTransports appTransports;
  private final long regionSize;
  private final ServiceLog log;
  private final ConcurrentHashMap<String, AppOutputs> apps = new ConcurrentHashMap<>();
  private final DriverLeases leases;
  private final NodeBudget budget;
  private final AtomicLong handOvers = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();

  /** Where the shared transport's outputs are kept across restarts; null: nowhere. */
  private final DurableOutputs durable;

  ServedOutputs(ShuffleTransport shared, AppTransports appTransports, long regionSize,
      DriverLeases leases, NodeBudget budget, ServiceLog log) {
    this(shared, appTransports, regionSize, leases, budget, log, null);
  }

  /** @param durable where outputs on {@code shared} are kept, or null: not kept */
  ServedOutputs(ShuffleTransport shared, AppTransports appTransports, long regionSize,
      DriverLeases leases, NodeBudget budget, ServiceLog log, DurableOutputs durable) {
    this.durable = durable;
    this.shared = shared;
    this.appTransports = appTransports;
    this.regionSize = regionSize;
    this.leases = leases;
    this.budget = budget;
    this.log = log;
  }

  /**
   * Answers one decoded request. A HAND_OVER's descriptors become the service's when it is
   * accepted; on a refusal they are closed here.
   */
  HandOverAnswer answer(HandOverRequest req, int[] fds) {
    return answer(req, fds, new HandOverConnection());
  }

  /**
   * As {@link #answer(HandOverRequest, int[])}, on a connection with what it declared so far:
   * a hand-over of the application whose driver it announced renews that lease, and an
   * authenticated application's outputs are taken and released only on a connection that
   * presented its secret.
   */
  HandOverAnswer answer(HandOverRequest req, int[] fds, HandOverConnection conn) {
    try {
      switch (req.kind()) {
        case HAND_OVER:
          if (conn.driver != null && conn.driver.appId().equals(req.appId())) {
            announceIfAllowed(conn.driver, conn);
          }
          return handOver(req, fds, conn);
        case RELEASE_SHUFFLE:
          return releasePart(req, conn, app -> app.releaseShuffle(req.shuffleId()),
              " shuffle " + req.shuffleId());
        case RELEASE_OUTPUT:
          return releasePart(req, conn, app -> app.releaseOutput(req.shuffleId(),
              req.mapId()), " shuffle " + req.shuffleId() + " map " + req.mapId()
              + " (its task attempt ended without success)");
        case RELEASE_APP: {
          String denied = conn.fromParent ? null : denied(apps.get(req.appId()), conn);
          if (denied != null) {
            return refuse(req.kind(), req + " refused: " + denied, fds);
          }
          AppOutputs.Released r = releaseApp(req.appId(), conn.fromParent
              ? "the process that started this service asked (its parent; on YARN the "
                  + "NodeManager, at the application's end)"
              : "its driver asked");
          return HandOverAnswer.released(req.kind(), r.outputs, r.bytes);
        }
        case APP_DRIVER:
          // Kept on the connection either way: an executor announces its driver before it
          // proves the secret (APP_AUTH), and its next hand-over announces it then.
          announceIfAllowed(req, conn);
          conn.driver = req;
          return HandOverAnswer.lease(leases.timeoutMs());
        case APP_AUTH:
          return authenticate(req, conn);
        default:
          return HandOverAnswer.stats(stats());
      }
    } catch (IOException | RuntimeException e) {
      return refuse(req.kind(), req + ": " + e.getMessage(), fds);
    }
  }

  /**
   * RELEASE_SHUFFLE or RELEASE_OUTPUT: part of an application's outputs, on a connection that
   * may release them; an application left with none is closed (its own transport too).
   */
  private HandOverAnswer releasePart(HandOverRequest req, HandOverConnection conn,
      java.util.function.Function<AppOutputs, AppOutputs.Released> release, String what) {
    AppOutputs app = apps.get(req.appId());
    String denied = denied(app, conn);
    if (denied != null) {
      return refuse(req.kind(), req + " refused: " + denied, new int[0]);
    }
    AppOutputs.Released r = app == null ? new AppOutputs.Released(0, 0) : release.apply(app);
    budget.release(r.bytes);
    if (app != null && app.closeIfEmpty()) {
      apps.remove(req.appId(), app);
    }
    log.info("released " + req.appId() + what + ": " + r.outputs + " outputs, " + r.bytes
        + " bytes, " + r.descriptors + " descriptors; " + stats());
    return HandOverAnswer.released(req.kind(), r.outputs, r.bytes);
  }

  /** Null when {@code conn} may hand over or release {@code app}'s outputs; else why not. */
  private static String denied(AppOutputs app, HandOverConnection conn) {
    if (app == null || !app.authenticated()) {
      return null;
    }
    HandOverRequest auth = conn.auth(app.appId());
    if (auth == null || !app.secretMatches(auth.secret())) {
      return "application " + app.appId() + " authenticates (spark.authenticate) and this "
          + "connection did not present its secret";
    }
    return null;
  }

  /**
   * APP_AUTH: recorded on the connection; the application's own transport opens with its
   * first hand-over (a driver that proves itself only to release opens none). A proof for an
   * application the service holds must present the secret it was opened with; one that
   * handed over outputs without a secret keeps the shared transport, and a proof for it is
   * refused (its readers could not authenticate).
   */
  private HandOverAnswer authenticate(HandOverRequest req, HandOverConnection conn) {
    AppOutputs app = apps.get(req.appId());
    if (app != null && !app.secretMatches(req.secret())) {
      return refuse(req.kind(), req + " refused: " + (app.authenticated()
          ? "the secret differs from the one application " + req.appId() + " proved first"
          : "application " + req.appId() + " handed over outputs without authentication to "
              + "this service; its executors must all run with spark.authenticate, or none"),
          new int[0]);
    }
    if (!conn.authenticated(req)) {
      return refuse(req.kind(), req + " refused: this connection proved "
          + HandOverConnection.MAX_AUTHENTICATED + " applications already", new int[0]);
    }
    return HandOverAnswer.authenticated();
  }

  /**
   * The application's outputs, opened with a transport of its own when absent: with
   * {@code auth}'s secret, or (null) without authentication.
   */
  private AppOutputs ownApp(String appId, HandOverRequest auth) throws IOException {
    AppOutputs app = apps.get(appId);
    if (app != null) {
      return app;
    }
    long own = apps.values().stream().filter(AppOutputs::ownsTransport).count();
    if (own >= MAX_OWN_TRANSPORTS) {
      throw new RefusalException("this node service serves " + own + " applications on "
          + "transports of their own, its limit");
    }
    String secret = auth == null ? null : auth.secret();
    ShuffleTransport t = appTransports.open(appId, secret,
        auth == null ? 0 : auth.encryption());
    AppOutputs fresh = new AppOutputs(appId, t, regionSize, secret, true);
    app = apps.putIfAbsent(appId, fresh);
    if (app != null) {
      fresh.close(); // another connection opened it first
      return app;
    }
    log.info("application " + appId + (secret != null ? " authenticates: its outputs are "
        + "served on " + t.name() + " " + t.localAddress() + " to readers that prove its secret"
        : ": its outputs are served on " + t.name() + " " + t.localAddress()
            + ", a transport of its own"));
    return fresh;
  }

  private HandOverAnswer handOver(HandOverRequest req, int[] fds, HandOverConnection conn)
      throws IOException {
    String problem = HandOverCheck.problem(req, fds);
    if (problem != null) {
      return refuse(req.kind(), req + " refused: " + problem, fds);
    }
    long planned = 0;
    for (int fd : fds) {
      planned += Fds.stat(fd)[1]; // data, index and checksums: what the registry maps
    }
    HandOverRequest auth = conn.auth(req.appId());
    while (true) {
      AppOutputs app = auth != null || shared == null ? ownApp(req.appId(), auth)
          : apps.computeIfAbsent(req.appId(), this::sharedApp);
      String denied = denied(app, conn);
      if (denied == null && auth != null && !app.authenticated()) {
        denied = "application " + req.appId() + " handed over outputs without authentication "
            + "to this service";
      }
      if (denied != null) {
        return refuse(req.kind(), req + " refused: " + denied, fds);
      }
      MapOutputDescriptor d = app.register(req, fds, planned, budget);
      if (d != null) {
        handOvers.incrementAndGet();
        ShuffleTransport t = app.transport();
        return HandOverAnswer.registered(t.name(), t.localAddress(), d);
      }
      apps.remove(req.appId(), app); // released meanwhile: a fresh one takes it
    }
  }

  /** An application without authentication on the shared transport, kept when state is on. */
  private AppOutputs sharedApp(String appId) {
    return new AppOutputs(appId, shared, regionSize).keptIn(durable);
  }

  /**
   * Serves again every output the state directory kept (before any connection is taken):
   * each under the descriptor readers were told, its application's lease fresh. An output
   * whose links or capabilities no longer work is dropped from the state, logged.
   *
   * @return how many outputs were restored
   */
  int restore() {
    if (durable == null || shared == null) {
      return 0;
    }
    int restored = 0;
    for (OutputJournal.Output o : durable.live()) {
      int[] fds = new int[o.sumsSize >= 0 ? 3 : 2];
      java.util.Arrays.fill(fds, -1);
      try {
        MapOutputDescriptor previous = MapOutputDescriptor.readFrom(
            new java.io.DataInputStream(new java.io.ByteArrayInputStream(o.descriptor)));
        long planned = 0;
        for (int i = 0; i < fds.length; i++) {
          fds[i] = Fds.openRead(durable.link(o, i));
          planned += Fds.stat(fds[i])[1];
        }
        AppOutputs app = apps.computeIfAbsent(o.appId, this::sharedApp);
        if (app.restore(previous, fds, planned, budget) == null) {
          throw new IOException("its application was released meanwhile");
        }
        restored++;
      } catch (IOException | RuntimeException e) {
        Fds.closeAll(fds);
        log.info("state: " + o.appId + " shuffle " + o.shuffleId + " map " + o.mapId
            + " cannot be served again, dropped: " + e.getMessage());
        durable.dropRestored(o);
      }
    }
    for (java.util.Map.Entry<String, String> d : durable.drivers().entrySet()) {
      int colon = d.getValue().lastIndexOf(':');
      if (apps.containsKey(d.getKey()) && leases.announce(d.getKey(),
          d.getValue().substring(0, colon),
          Integer.parseInt(d.getValue().substring(colon + 1)))) {
        log.info("application " + d.getKey() + ": driver at " + d.getValue() + " (from the "
            + "state), its lease starts now");
      }
    }
    return restored;
  }

  /**
   * Names the application's driver for its lease, unless the application authenticates and
   * this connection did not present its secret: whoever may name the driver may end the
   * lease (a driver that refuses connections ends it within seconds).
   */
  private void announceIfAllowed(HandOverRequest driver, HandOverConnection conn) {
    if (denied(apps.get(driver.appId()), conn) == null) {
      announce(driver);
    }
  }

  private void announce(HandOverRequest driver) {
    if (durable != null) {
      durable.driver(driver.appId(), driver.driverHost(), driver.driverPort());
    }
    if (leases.announce(driver.appId(), driver.driverHost(), driver.driverPort())) {
      log.info("application " + driver.appId() + ": driver at " + driver.driverHost() + ":"
          + driver.driverPort() + "; its outputs are released " + leases.timeoutMs()
          + " ms after it stops accepting connections");
    }
  }

  /** Releases every output of an application and its lease; logs why and what. */
  private AppOutputs.Released releaseApp(String appId, String why) {
    leases.forget(appId);
    AppOutputs app = apps.remove(appId);
    AppOutputs.Released r = app == null ? new AppOutputs.Released(0, 0) : app.close();
    budget.release(r.bytes);
    log.info("released " + appId + " (" + why + "): " + r.outputs + " outputs, " + r.bytes
        + " bytes, " + r.descriptors + " descriptors; " + stats());
    return r;
  }

  /** One round of the leases: releases each application whose driver stayed unreachable. */
  void probeDrivers() {
    for (DriverLeases.Expired e : leases.probe()) {
      releaseApp(e.appId, e.reason);
    }
  }

  /** Counts and logs a refusal and closes the request's descriptors. */
  HandOverAnswer refuse(Kind kind, String reason, int[] fds) {
    Fds.closeAll(fds);
    refusals.incrementAndGet();
    log.info("refused: " + reason);
    return HandOverAnswer.refused(kind, reason);
  }

  ServiceStats stats() {
    long bytes = 0;
    int descriptors = 0;
    int outputs = 0;
    int applications = 0;
    for (AppOutputs app : new ArrayList<>(apps.values())) {
      bytes += app.registeredBytes();
      descriptors += app.openDescriptors();
      outputs += app.outputs();
      applications += app.outputs() > 0 ? 1 : 0;
    }
    return new ServiceStats(bytes, descriptors, applications, outputs, handOvers.get(),
        refusals.get());
  }

  /**
   * Stops serving every application (service shutdown): the state directory keeps what it
   * holds, so the next start serves it again (a rolling restart is a SIGTERM).
   */
  void close() {
    for (String id : new ArrayList<>(apps.keySet())) {
      AppOutputs app = apps.remove(id);
      if (app != null) {
        app.closeKeepingState();
      }
    }
  }
}
