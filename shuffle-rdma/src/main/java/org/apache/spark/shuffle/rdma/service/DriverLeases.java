/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.config.RdmaConf;

/**
 * The lease on each application's outputs: the driver executors announced (APP_DRIVER) is
 * checked every probe interval with one TCP connect to its RPC port; an application whose
 * driver has refused or timed out every check for the driver timeout is expired, and the
 * service releases it as at a normal application end. This ends what a crashed or killed
 * driver left, and what an application left on services its end never reached (a driver
 * releases only through the service of its own host).
 *
 * <p>A driver that accepted a check before and now refuses connections (ECONNREFUSED: its
 * host answers that nothing listens on the driver's RPC port, which Spark keeps open for the
 * whole application) has ended: that application is expired after the shorter driver-gone
 * timeout, checked more often meanwhile. Timeouts and unreachable hosts (a partition, a
 * blip, a host down) wait for the full driver timeout.
 *
 * <p>Why the service checks the driver instead of the driver renewing: the driver reaches a
 * service only through a Unix socket on its own host; renewing across hosts would need a
 * network port on every service that accepts control messages, which would need its own
 * authentication. A connect from the service needs nothing new on either side, and the
 * driver's RPC address is one every executor already reaches. A connect that succeeds
 * proves a listener there, not this application's driver: a port reused after the driver
 * died keeps the lease (outputs kept longer, never released early).
 */
final class DriverLeases {
  /** At most this many applications with a lease (a bound on what peers can make us hold). */
  static final int MAX_LEASES = 4096;
  /** The shortest delay between two checks of a refusing driver. */
  static final long MIN_RECHECK_MS = 100;

  private final long timeoutNanos;
  private final long goneNanos;
  private final long intervalNanos;
  private final long recheckNanos;
  private final int probeTimeoutMs;
  private final ServiceLog log;
  private final ConcurrentHashMap<String, Lease> leases = new ConcurrentHashMap<>();

  /** One application's driver and how long it has been unreachable. */
  static final class Lease {
    final String host;
    final int port;
    /** System.nanoTime() of the first failed check since the last good one; 0: reachable. */
    volatile long failingSince;
    /** System.nanoTime() of the first refusal since the last other outcome; 0: none. */
    volatile long refusedSince;
    /** A check succeeded since the announcement: a refusal now means the driver ended. */
    volatile boolean answered;
    /** System.nanoTime() at or after which the next check is due (now: at the next round). */
    volatile long nextCheck = System.nanoTime();
    volatile String lastFailure;

    Lease(String host, int port) {
      this.host = host;
      this.port = port;
    }
  }

  /** An application whose lease ran out, and why. */
  static final class Expired {
    final String appId;
    final String reason;

    Expired(String appId, String reason) {
      this.appId = appId;
      this.reason = reason;
    }
  }

  /** Why a check failed, and whether the driver's host refused the connection. */
  static final class Failure {
    final String message;
    final boolean refused;

    Failure(String message, boolean refused) {
      this.message = message;
      this.refused = refused;
    }
  }

  DriverLeases(long timeoutMs, long probeIntervalMs, ServiceLog log) {
    this(timeoutMs, 0, probeIntervalMs, log);
  }

  /** @param goneTimeoutMs the driver-gone timeout (capped by {@code timeoutMs}); 0: off */
  DriverLeases(long timeoutMs, long goneTimeoutMs, long probeIntervalMs, ServiceLog log) {
    if (probeIntervalMs > timeoutMs) {
      throw new IllegalArgumentException(RdmaConf.SERVICE_DRIVER_PROBE_INTERVAL().key() + " ("
          + probeIntervalMs + " ms) is longer than " + RdmaConf.SERVICE_DRIVER_TIMEOUT().key()
          + " (" + timeoutMs + " ms): a driver would be declared gone before it was checked; "
          + "lower the interval or raise the timeout");
    }
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    this.goneNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(goneTimeoutMs, timeoutMs));
    this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(probeIntervalMs);
    this.recheckNanos = goneNanos == 0 ? intervalNanos : Math.min(intervalNanos,
        Math.max(TimeUnit.MILLISECONDS.toNanos(MIN_RECHECK_MS), goneNanos / 5));
    this.probeTimeoutMs = (int) Math.min(Integer.MAX_VALUE, probeIntervalMs);
    this.log = log;
  }

  long timeoutMs() {
    return TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
  }

  long goneTimeoutMs() {
    return TimeUnit.NANOSECONDS.toMillis(goneNanos);
  }

  /** How often {@link #probe} should run: each lease is checked only when it is due. */
  long tickMs() {
    return TimeUnit.NANOSECONDS.toMillis(recheckNanos);
  }

  /**
   * Records the application's driver (a newer announcement replaces an older one: each
   * executor of the application names the same driver).
   *
   * @return whether the lease is new or names another driver than before
   * @throws IllegalStateException when {@link #MAX_LEASES} other applications hold one
   */
  boolean announce(String appId, String host, int port) {
    Lease old = leases.get(appId);
    if (old != null && old.host.equals(host) && old.port == port) {
      return false;
    }
    if (old == null && leases.size() >= MAX_LEASES) {
      throw new IllegalStateException("the node service holds leases of " + MAX_LEASES
          + " applications, its limit");
    }
    leases.put(appId, new Lease(host, port));
    return true;
  }

  /** The application was released: its lease goes too. */
  void forget(String appId) {
    leases.remove(appId);
  }

  boolean has(String appId) {
    return leases.containsKey(appId);
  }

  /**
   * Checks every driver that is due once and returns (and forgets) the applications whose
   * driver has been unreachable for the timeout, or has refused connections for the
   * driver-gone timeout after it answered. One connect per application, one after another,
   * each bounded by the probe interval.
   */
  List<Expired> probe() {
    List<Expired> expired = new ArrayList<>();
    for (Map.Entry<String, Lease> e : leases.entrySet()) {
      Lease l = e.getValue();
      if (System.nanoTime() - l.nextCheck < 0) {
        continue;
      }
      Failure failure = check(l.host, l.port, probeTimeoutMs);
      long now = System.nanoTime();
      l.nextCheck = now + intervalNanos;
      if (failure == null) {
        if (l.failingSince != 0) {
          log.info("driver of " + e.getKey() + " at " + l.host + ":" + l.port
              + " answers again; its outputs stay");
        }
        l.failingSince = 0;
        l.refusedSince = 0;
        l.answered = true;
        continue;
      }
      if (l.failingSince == 0) {
        l.failingSince = now;
        log.info("driver of " + e.getKey() + " at " + l.host + ":" + l.port + " is "
            + "unreachable (" + failure.message + "); its outputs are released if it stays "
            + "so for " + timeoutMs() + " ms" + (failure.refused && l.answered && goneNanos > 0
                ? " (" + goneTimeoutMs() + " ms while it refuses connections)" : ""));
      }
      l.lastFailure = failure.message;
      if (failure.refused && l.answered && goneNanos > 0) {
        if (l.refusedSince == 0) {
          l.refusedSince = now;
        }
        l.nextCheck = now + recheckNanos;
        long refusedFor = now - l.refusedSince;
        if (refusedFor >= goneNanos && leases.remove(e.getKey(), l)) {
          expired.add(new Expired(e.getKey(), "its driver " + l.host + ":" + l.port
              + " has refused connections for " + TimeUnit.NANOSECONDS.toMillis(refusedFor)
              + " ms after it had answered: its application ended or its driver died ("
              + RdmaConf.SERVICE_DRIVER_GONE_TIMEOUT().key() + " " + goneTimeoutMs() + " ms)"));
          continue;
        }
      } else {
        l.refusedSince = 0;
      }
      long failingFor = now - l.failingSince;
      if (failingFor >= timeoutNanos && leases.remove(e.getKey(), l)) {
        expired.add(new Expired(e.getKey(), "its driver " + l.host + ":" + l.port
            + " has been unreachable for " + TimeUnit.NANOSECONDS.toSeconds(failingFor)
            + " s (" + RdmaConf.SERVICE_DRIVER_TIMEOUT().key() + " " + timeoutMs()
            + " ms; last check: " + failure.message + ")"));
      }
    }
    return expired;
  }

  /**
   * Null when something accepts connections at host:port within the timeout; else why not,
   * and whether the host refused (ECONNREFUSED: Java's ConnectException, which it throws for
   * nothing else on connect; a timeout is a SocketTimeoutException, an unreachable host a
   * NoRouteToHostException).
   */
  static Failure check(String host, int port, int timeoutMs) {
    InetSocketAddress at = new InetSocketAddress(host, port); // resolved again each check
    if (at.isUnresolved()) {
      return new Failure("host " + host + " does not resolve", false);
    }
    try (Socket s = new Socket()) {
      s.connect(at, timeoutMs);
      return null;
    } catch (ConnectException e) {
      return new Failure(e.getMessage(), true);
    } catch (IOException e) {
      return new Failure(e.getMessage(), false);
    }
  }
}
