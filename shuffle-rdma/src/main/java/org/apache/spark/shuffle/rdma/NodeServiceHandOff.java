/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.File;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.metadata.NodeServiceId;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor's side of the node service (docs/node-service.md): hands committed map outputs
 * over and publishes them under the service's id, announces each service to the driver once,
 * releases shuffles, counts what it could not hand over. One per ExecutorRuntime, when
 * spark.shuffle.rdma.service.socket is set.
 */
final class NodeServiceHandOff implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeServiceHandOff.class);

  private final ExecutorHandOver handOver;
  private final ShuffleTableCache tables;
  private final String executorId;
  /** The transport this executor's readers read with: the service must serve on it. */
  private final String transportName;
  /** Node service addresses announced to the driver (one round trip per service). */
  private final Set<PeerAddress> announced = ConcurrentHashMap.newKeySet();
  /** Set when the service serves on another transport than this executor reads with. */
  private volatile boolean off;
  /** Whether the service's lease (or its absence) was logged. */
  private volatile boolean leaseLogged;
  private final AtomicLong handedOver = new AtomicLong();
  private final AtomicLong notHandedOver = new AtomicLong();

  NodeServiceHandOff(ExecutorHandOver handOver, ShuffleTableCache tables, String executorId,
      String transportName) {
    this.handOver = handOver;
    this.tables = tables;
    this.executorId = executorId;
    this.transportName = transportName;
  }

  /**
   * Hands a committed output to the service and publishes the service's descriptor under the
   * service's id, before the MapStatus leaves; false (counted, the first one logged) when the
   * service refused it or could not be reached, and the caller registers it as without a
   * service. Same place on the task's path as a registration: one round trip on the socket
   * (open, send, the service's checks and registration) instead of the mmap and register calls.
   */
  boolean handOver(int shuffleId, long mapId, File data, File index, File sums,
      ChecksumAlgorithm algorithm) {
    if (off) {
      return false;
    }
    HandOverAnswer a = handOver.handOver(shuffleId, mapId, data, index, sums, algorithm);
    if (a == null) {
      notHandedOver(handOver.lastProblem());
      return false;
    }
    if (!a.transport().equals(transportName)) {
      // Readers use this executor's transport: they could not read the service's. The copy
      // handed over stays in the service until its shuffle is released.
      off = true;
      notHandedOver("the node service serves on " + a.transport() + " and this executor "
          + "reads with " + transportName + "; no more outputs are handed over");
      return false;
    }
    PeerAddress at = a.address();
    if (!announced.contains(at)) {
      tables.announceService(executorId, at); // before the first descriptor naming it
      announced.add(at);
    }
    tables.publishHandedOver(a.descriptor().withExecutorId(NodeServiceId.of(at)), executorId);
    handedOver.incrementAndGet();
    if (!leaseLogged) {
      leaseLogged = true;
      logLease();
    }
    return true;
  }

  private void logLease() {
    if (handOver.leaseMs() >= 0) {
      LOG.info("node service {} releases this application's outputs {} ms after its driver "
          + "stops accepting connections (its {})", handOver.serviceSocket(),
          handOver.leaseMs(), RdmaConf.SERVICE_DRIVER_TIMEOUT().key());
    } else {
      LOG.warn("node service {} took no lease on this application ({}): what it holds of "
          + "it stays until Spark releases it there or the service restarts",
          handOver.serviceSocket(), handOver.leaseProblem() != null ? handOver.leaseProblem()
              : "no driver address in Spark's configuration");
    }
  }

  private void notHandedOver(String why) {
    if (notHandedOver.incrementAndGet() == 1) {
      LOG.warn("{}; this executor registers such outputs itself, so they go with it "
          + "(registry.notHandedOver counts them; logged once)", why);
    } else {
      LOG.debug("{}", why);
    }
  }

  /**
   * Spark unregistered the shuffle. Every executor of the node asks; the first releases the
   * application's outputs of that shuffle (also those of executors that are gone), the others
   * release 0.
   */
  void releaseShuffle(int shuffleId) {
    if (handOver.releaseShuffle(shuffleId) == null) {
      LOG.debug("shuffle {} not released in the node service: {}", shuffleId,
          handOver.lastProblem());
    }
  }

  /**
   * The driver saw the task attempt of this output end without success after its commit:
   * releases it in the service if this executor handed it over (0 released otherwise).
   */
  void releaseOutput(int shuffleId, long mapId) {
    HandOverAnswer a = handOver.releaseOutput(shuffleId, mapId);
    if (a == null) {
      LOG.debug("map output {} of shuffle {} not released in the node service: {}", mapId,
          shuffleId, handOver.lastProblem());
    } else if (a.releasedOutputs() > 0) {
      LOG.info("released map output {} of shuffle {} in the node service: its task attempt "
          + "failed after the commit, so Spark never tracked it", mapId, shuffleId);
    }
  }

  long handedOver() {
    return handedOver.get();
  }

  long notHandedOver() {
    return notHandedOver.get();
  }

  /** Closes the connection and releases nothing: what was handed over outlives the executor. */
  @Override
  public void close() {
    handOver.close();
  }
}
