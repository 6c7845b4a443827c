/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.io.UncheckedIOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Driver side: what RdmaMasterEndpoint accepts from executors. An executor may register its
 * own transport and publish descriptors of its own map outputs, for shuffles the driver
 * registered and with the number of partitions the driver registered them with; nothing
 * else. Every refusal is counted and answered with an exception of the JDK (the asker
 * deserializes it with Spark's class loader): {@link SecurityException} for a message sent
 * on another executor's behalf, {@link IllegalArgumentException} for an inconsistent
 * descriptor. Refusals are logged at the 1st, 2nd, 4th, 8th, ... one, so a hostile executor
 * cannot flood the driver's log.
 *
 * <p>Thread-safe: publishes and registrations come on the master's thread, shuffle
 * registrations on the driver's (DAGScheduler or user) threads.
 */
public final class MetadataGuard {
  private static final Logger LOG = LoggerFactory.getLogger(MetadataGuard.class);

  private final ExecutorBinding binding;
  private final ConcurrentHashMap<Integer, Integer> partitions = new ConcurrentHashMap<>();
  private final AtomicLong refusals = new AtomicLong();

  public MetadataGuard(ExecutorBinding binding) {
    this.binding = binding;
  }

  /** The driver registered a shuffle (RdmaShuffleManager.registerShuffle). */
  public void shuffleRegistered(int shuffleId, int numPartitions) {
    if (numPartitions < 0) {
      throw new IllegalArgumentException("shuffle " + shuffleId + " with " + numPartitions
          + " partitions");
    }
    partitions.put(shuffleId, numPartitions);
  }

  /** The driver unregistered a shuffle: later publishes for it are refused. */
  public void shuffleForgotten(int shuffleId) {
    partitions.remove(shuffleId);
  }

  /**
   * Spark removed an executor (driver only): later RegisterTransport and PublishMapOutput
   * naming it are refused, from any sender, so its id cannot be taken over.
   */
  public void executorRemoved(String executorId) {
    binding.retire(executorId);
  }

  /** RegisterTransport from {@code host:port}; a SecurityException when refused. */
  public void registerTransport(String executorId, String host, int port) {
    if (NodeServiceId.isService(executorId)) {
      // Service names are the driver's to list (RegisterNodeService), derived from addresses.
      throw refuse(new SecurityException("RegisterTransport refused: " + executorId
          + " is a node service name, not an executor id"));
    }
    String problem = binding.bind(executorId, binding.identity(host, port));
    if (problem != null) {
      throw refuse(new SecurityException("RegisterTransport refused: " + problem));
    }
  }

  /**
   * The log record for PublishMapOutput from {@code host:port}: the entry decodes, names
   * the shuffle and map id it is published as, an executor bound to this sender, a shuffle
   * the driver registered and that shuffle's number of partitions. Else refused.
   */
  public byte[] publishedRecord(int shuffleId, long mapId, byte[] entry, String host,
      int port) {
    MapOutputDescriptor d;
    try {
      d = DescriptorCodec.decodeEntry(entry);
    } catch (UncheckedIOException e) {
      throw refuse(new IllegalArgumentException("PublishMapOutput of shuffle " + shuffleId
          + " map " + mapId + " refused: " + e.getMessage() + ": " + e.getCause().getMessage()));
    }
    if (d.shuffleId() != shuffleId || d.mapId() != mapId) {
      throw refuse(new IllegalArgumentException("PublishMapOutput refused: entry of " + d
          + " published as shuffle " + shuffleId + " map " + mapId));
    }
    String problem = binding.check(d.executorId(), binding.identity(host, port));
    if (problem != null) {
      throw refuse(new SecurityException("PublishMapOutput of " + d + " refused: " + problem));
    }
    checkPartitions(shuffleId, d, "PublishMapOutput");
    return DescriptorCodec.record(entry);
  }

  /**
   * RegisterNodeService from {@code host:port}, on behalf of {@code executorId}: only an
   * executor bound to this sender may announce the node service it handed outputs to; a
   * SecurityException when refused.
   */
  public void registerService(String executorId, String host, int port) {
    String problem = binding.check(executorId, binding.identity(host, port));
    if (problem != null) {
      throw refuse(new SecurityException("RegisterNodeService refused: " + problem));
    }
  }

  /**
   * The log record for PublishHandedOver from {@code host:port}: {@code publisher} is bound
   * to this sender (an executor announces only the outputs it handed over itself), and the
   * entry passes the checks of {@link #publishedRecord} except that it names a node service
   * ({@code services} holds the ones announced) instead of its publisher.
   */
  public byte[] handedOverRecord(int shuffleId, long mapId, String publisher, byte[] entry,
      String host, int port, java.util.function.Predicate<String> services) {
    MapOutputDescriptor d;
    try {
      d = DescriptorCodec.decodeEntry(entry);
    } catch (UncheckedIOException e) {
      throw refuse(new IllegalArgumentException("PublishHandedOver of shuffle " + shuffleId
          + " map " + mapId + " refused: " + e.getMessage() + ": " + e.getCause().getMessage()));
    }
    if (d.shuffleId() != shuffleId || d.mapId() != mapId) {
      throw refuse(new IllegalArgumentException("PublishHandedOver refused: entry of " + d
          + " published as shuffle " + shuffleId + " map " + mapId));
    }
    String problem = binding.check(publisher, binding.identity(host, port));
    if (problem != null) {
      throw refuse(new SecurityException("PublishHandedOver of " + d + " refused: " + problem));
    }
    if (!NodeServiceId.isService(d.executorId()) || !services.test(d.executorId())) {
      throw refuse(new IllegalArgumentException("PublishHandedOver of " + d + " refused: "
          + d.executorId() + " is not a node service announced to the driver"));
    }
    checkPartitions(shuffleId, d, "PublishHandedOver");
    return DescriptorCodec.handedOverRecord(publisher, entry);
  }

  private void checkPartitions(int shuffleId, MapOutputDescriptor d, String what) {
    Integer expected = partitions.get(shuffleId);
    if (expected == null) {
      throw refuse(new IllegalArgumentException(what + " of " + d + " refused: "
          + "shuffle " + shuffleId + " is not registered on the driver"));
    }
    if (d.numPartitions() != expected) {
      throw refuse(new IllegalArgumentException(what + " of " + d + " refused: "
          + "shuffle " + shuffleId + " has " + expected + " partitions"));
    }
  }

  /**
   * A request only the driver makes ({@code what}) came over RPC from {@code sender}
   * (null for a one-way message: Spark does not tell its sender). Counted; returned to be
   * answered.
   */
  public SecurityException driverOnly(String what, String sender) {
    return refuse(new SecurityException(what + (sender == null ? "" : " from " + sender)
        + " refused: only the driver sends it"));
  }

  /** Messages refused so far. */
  public long refusals() {
    return refusals.get();
  }

  private <E extends RuntimeException> E refuse(E e) {
    long n = refusals.incrementAndGet();
    if ((n & (n - 1)) == 0) {
      LOG.warn("RDMA shuffle metadata: {} ({} refused so far; logged at the 1st, 2nd, 4th, "
          + "8th, ... refusal)", e.getMessage(), n);
    }
    return e;
  }
}
