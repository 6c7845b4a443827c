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
 * Every map output the node service serves, per application, on the service's one
 * transport; answers each request. Requests of different applications run in parallel;
 * those of one application one at a time.
 */
final class ServedOutputs {
  private final ShuffleTransport transport;
  private final long regionSize;
  private final ServiceLog log;
  private final ConcurrentHashMap<String, AppOutputs> apps = new ConcurrentHashMap<>();
  private final DriverLeases leases;
  private final NodeBudget budget;
  private final AtomicLong handOvers = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();

  ServedOutputs(ShuffleTransport transport, long regionSize, DriverLeases leases,
      NodeBudget budget, ServiceLog log) {
    this.transport = transport;
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
    return answer(req, fds, null);
  }

  /**
   * As {@link #answer(HandOverRequest, int[])}, on a connection that announced {@code driver}
   * (APP_DRIVER, or null): a hand-over of that application renews its lease.
   */
  HandOverAnswer answer(HandOverRequest req, int[] fds, HandOverRequest driver) {
    try {
      switch (req.kind()) {
        case HAND_OVER:
          if (driver != null && driver.appId().equals(req.appId())) {
            announce(driver);
          }
          return handOver(req, fds);
        case RELEASE_SHUFFLE: {
          AppOutputs app = apps.get(req.appId());
          AppOutputs.Released r = app == null ? new AppOutputs.Released(0, 0)
              : app.releaseShuffle(req.shuffleId());
          budget.release(r.bytes);
          if (app != null && app.isEmpty()) {
            apps.remove(req.appId(), app);
          }
          log.info("released " + req.appId() + " shuffle " + req.shuffleId() + ": "
              + r.outputs + " outputs, " + r.bytes + " bytes, " + r.descriptors
              + " descriptors; " + stats());
          return HandOverAnswer.released(req.kind(), r.outputs, r.bytes);
        }
        case RELEASE_APP: {
          AppOutputs.Released r = releaseApp(req.appId(), "its driver asked");
          return HandOverAnswer.released(req.kind(), r.outputs, r.bytes);
        }
        case APP_DRIVER:
          announce(req);
          return HandOverAnswer.lease(leases.timeoutMs());
        default:
          return HandOverAnswer.stats(stats());
      }
    } catch (IOException | RuntimeException e) {
      return refuse(req.kind(), req + ": " + e.getMessage(), fds);
    }
  }

  private HandOverAnswer handOver(HandOverRequest req, int[] fds) throws IOException {
    String problem = HandOverCheck.problem(req, fds);
    if (problem != null) {
      return refuse(req.kind(), req + " refused: " + problem, fds);
    }
    long planned = 0;
    for (int fd : fds) {
      planned += Fds.stat(fd)[1]; // data, index and checksums: what the registry maps
    }
    while (true) {
      AppOutputs app = apps.computeIfAbsent(req.appId(),
          id -> new AppOutputs(id, transport, regionSize));
      MapOutputDescriptor d = app.register(req, fds, planned, budget);
      if (d != null) {
        handOvers.incrementAndGet();
        return HandOverAnswer.registered(transport.name(), transport.localAddress(), d);
      }
      apps.remove(req.appId(), app); // released meanwhile: a fresh one takes it
    }
  }

  private void announce(HandOverRequest driver) {
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

  /** Releases every application (service shutdown). */
  void close() {
    for (String id : new ArrayList<>(apps.keySet())) {
      AppOutputs app = apps.remove(id);
      if (app != null) {
        app.close();
      }
    }
  }
}
