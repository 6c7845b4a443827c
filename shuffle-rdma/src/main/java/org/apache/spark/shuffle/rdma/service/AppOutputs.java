/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.registration.MapOutputRegistry;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;

/**
 * The map outputs one application handed to this service: a {@link MapOutputRegistry} of
 * its own (the executors' registration code path; shuffle ids are per application) and the
 * descriptors of the files, held open until the output is released. The registry opens the
 * files through /proc/self/fd/N, which names the passed file even after Spark deleted its
 * path; holding the descriptor keeps that name valid for the registry's backing checks.
 * An application with a transport of its own (every one on verbs; one that proved itself with
 * its secret, spark.authenticate, on tcp) holds only its keys there, and its readers prove the
 * secret when it has one; that transport closes with the application.
 */
final class AppOutputs {
  static final String SERVICE_EXECUTOR_ID = "node-service";
  private static final long RELEASE_WAIT_S = 30;

  private final String appId;
  private final MapOutputRegistry registry;
  private final ShuffleTransport transport;
  /** The application's secret (spark.authenticate); else null. */
  private final byte[] secret;
  /** Whether {@link #transport} is this application's own, closed with it. */
  private final boolean ownsTransport;
  /** shuffle id, map id: the descriptors (data, index[, checksums]). Guarded by this. */
  private final Map<Integer, Map<Long, int[]>> held = new HashMap<>();
  private int openDescriptors;
  private boolean closed;
  /** Where its outputs are kept across restarts; null: not kept (own transport, or off). */
  private DurableOutputs durable;

  /** An application without authentication, on the service's shared transport. */
  AppOutputs(String appId, ShuffleTransport transport, long regionSize) {
    this(appId, transport, regionSize, null, false);
  }

  /**
   * @param secret the application's secret, or null: without authentication
   * @param ownsTransport whether {@code transport} is the application's own, closed with it
   */
  AppOutputs(String appId, ShuffleTransport transport, long regionSize, String secret,
      boolean ownsTransport) {
    if (secret != null && !ownsTransport) {
      throw new IllegalArgumentException("an application with a secret has its own transport");
    }
    this.appId = appId;
    this.transport = transport;
    this.ownsTransport = ownsTransport;
    this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
    this.registry = new MapOutputRegistry(transport, regionSize, SERVICE_EXECUTOR_ID);
  }

  /** Keeps this application's outputs in {@code state} from now on (set before any). */
  AppOutputs keptIn(DurableOutputs state) {
    this.durable = state;
    return this;
  }

  String appId() {
    return appId;
  }

  /** Where readers read this application's outputs. */
  ShuffleTransport transport() {
    return transport;
  }

  /** Whether its transport is its own (closed with it). */
  boolean ownsTransport() {
    return ownsTransport;
  }

  /** Whether readers must authenticate with the application's secret. */
  boolean authenticated() {
    return secret != null;
  }

  /** Whether {@code other} is this application's secret (constant time). */
  boolean secretMatches(String other) {
    return secret != null && MessageDigest.isEqual(secret,
        other.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Registers the handed-over files; on success the descriptors are this object's, on a
   * refusal or failure the caller still owns (and closes) them.
   *
   * @return the descriptor, or null when this application was released meanwhile
   * @throws RefusalException a duplicate hand-over or a registration failure
   */
  synchronized MapOutputDescriptor register(HandOverRequest req, int[] fds, long planned,
      NodeBudget budget) throws IOException {
    MapOutputDescriptor d = register(req.shuffleId(), req.mapId(), req.checksumAlgorithm(),
        fds, planned, budget, null);
    if (d != null && durable != null) {
      // Under this lock, so a release of the shuffle cannot slip between the two.
      durable.handedOver(appId, fds, d);
    }
    return d;
  }

  /**
   * Registers an output kept in the state directory again, under the descriptor readers were
   * told before the restart ({@code fds}: its links, opened); as {@link #register} otherwise.
   */
  synchronized MapOutputDescriptor restore(MapOutputDescriptor previous, int[] fds,
      long planned, NodeBudget budget) throws IOException {
    return register(previous.shuffleId(), previous.mapId(), previous.checksumAlgorithm(), fds,
        planned, budget, previous);
  }

  private MapOutputDescriptor register(int shuffleId, long mapId,
      org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm algorithm, int[] fds,
      long planned, NodeBudget budget, MapOutputDescriptor previous) throws IOException {
    if (closed) {
      return null;
    }
    Map<Long, int[]> shuffle = held.get(shuffleId);
    if (shuffle != null && shuffle.containsKey(mapId)) {
      throw new RefusalException(appId + " shuffle " + shuffleId + " map "
          + mapId + " was handed over already; release the shuffle first");
    }
    long before = registry.registeredBytes();
    String over = budget.reserve(planned, before);
    if (over != null) {
      throw new RefusalException(over + "; the executor serves it itself");
    }
    File data = Fds.procPath(fds[0]).toFile();
    File index = Fds.procPath(fds[1]).toFile();
    File sums = fds.length == 3 ? Fds.procPath(fds[2]).toFile() : null;
    MapOutputDescriptor d;
    try {
      d = previous != null ? registry.restore(previous, data, index, sums)
          : registry.register(shuffleId, mapId, data, index, sums, algorithm);
    } catch (IOException | RuntimeException e) {
      budget.release(planned);
      throw e;
    }
    // What the registry took, exactly (a file that changed since its stat): the budget
    // then gives back what a release frees.
    budget.release(planned - (registry.registeredBytes() - before));
    if (d == null) {
      throw new RefusalException("the registry refused the output (over its cap)");
    }
    held.computeIfAbsent(shuffleId, s -> new HashMap<>()).put(mapId, fds);
    openDescriptors += fds.length;
    return d;
  }

  /** Releases one shuffle: keys revoked, mappings unmapped, descriptors closed. */
  synchronized Released releaseShuffle(int shuffleId) {
    Map<Long, int[]> shuffle = held.remove(shuffleId);
    if (shuffle == null) {
      return new Released(0, 0);
    }
    if (durable != null) {
      durable.released(appId, shuffleId, -1);
    }
    long before = registry.registeredBytes();
    await(registry.unregisterShuffle(shuffleId));
    return new Released(shuffle.size(), before - registry.registeredBytes(), close(shuffle));
  }

  /** Releases one output: its key revoked, its mappings unmapped, its descriptors closed. */
  synchronized Released releaseOutput(int shuffleId, long mapId) {
    Map<Long, int[]> shuffle = held.get(shuffleId);
    int[] fds = shuffle == null ? null : shuffle.remove(mapId);
    if (fds == null) {
      return new Released(0, 0);
    }
    if (shuffle.isEmpty()) {
      held.remove(shuffleId);
    }
    if (durable != null) {
      durable.released(appId, shuffleId, mapId);
    }
    long before = registry.registeredBytes();
    await(registry.release(shuffleId, mapId));
    Fds.closeAll(fds);
    openDescriptors -= fds.length;
    return new Released(1, before - registry.registeredBytes(), fds.length);
  }

  /** Releases everything and refuses hand-overs from now on (a new AppOutputs takes them). */
  synchronized Released close() {
    return close(false);
  }

  /**
   * As {@link #close()}, leaving its outputs in the state directory: the service stops
   * (SIGTERM) and its next start serves them again.
   */
  synchronized Released closeKeepingState() {
    return close(true);
  }

  private Released close(boolean keepState) {
    if (closed) {
      return new Released(0, 0);
    }
    closed = true;
    if (durable != null && !keepState) {
      durable.released(appId, -1, -1);
    }
    long before = registry.registeredBytes();
    int outputs = registry.outputCount();
    await(registry.close());
    int fds = 0;
    for (Map<Long, int[]> shuffle : held.values()) {
      fds += close(shuffle);
    }
    held.clear();
    if (ownsTransport) {
      transport.close(); // its own: no key of it is left
    }
    return new Released(outputs, before - registry.registeredBytes(), fds);
  }

  /**
   * Closes this when it holds no output (its last shuffle was released), under the same lock
   * a hand-over takes, so no output can land in it meanwhile; true when closed.
   */
  synchronized boolean closeIfEmpty() {
    if (!held.isEmpty()) {
      return false;
    }
    close();
    return true;
  }

  private int close(Map<Long, int[]> shuffle) {
    int n = 0;
    for (int[] fds : shuffle.values()) {
      Fds.closeAll(fds);
      n += fds.length;
    }
    openDescriptors -= n;
    return n;
  }

  /**
   * Waits until the transport no longer serves from the mappings. The keys are revoked
   * before this waits, so closing the descriptors after a timeout is still safe: no new
   * read reaches them, and the mappings keep the files alive on their own.
   */
  private void await(CompletableFuture<Void> done) {
    try {
      done.get(RELEASE_WAIT_S, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // counted as released: the keys are gone either way
    }
  }

  synchronized boolean isEmpty() {
    return held.isEmpty();
  }

  synchronized int openDescriptors() {
    return openDescriptors;
  }

  int outputs() {
    return registry.outputCount();
  }

  long registeredBytes() {
    return registry.registeredBytes();
  }

  /** What a release freed. */
  static final class Released {
    final int outputs;
    final long bytes;
    final int descriptors;

    Released(int outputs, long bytes) {
      this(outputs, bytes, 0);
    }

    Released(int outputs, long bytes, int descriptors) {
      this.outputs = outputs;
      this.bytes = bytes;
      this.descriptors = descriptors;
    }
  }
}
