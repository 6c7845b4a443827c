/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * An executor's view of the metadata plane: publishes its own descriptors and caches, per
 * shuffle, the descriptor table and peer addresses fetched from the driver. The first lookup
 * of a shuffle fetches the whole table; a later lookup that does not resolve (a map id the
 * cache does not hold, as after a stage retry or for an output committed after the last
 * fetch; a map id held for another executor; an executor without an address) asks only for
 * the records appended since the version held, and for the executor directory only if it
 * changed.
 * Concurrent misses of one shuffle share one refresh.
 *
 * <p>An executor Spark removed leaves the driver's directory. From the first directory this
 * cache receives without it (or that lacks the executor of a descriptor it holds), every
 * output of that executor resolves to nothing, without asking the driver again; the caller
 * fetches such blocks through Spark's own client, e.g. from an external shuffle service. A
 * cache whose directory still names it learns of the removal when a read there fails
 * ({@link #departed}).
 *
 * <p>An output its executor handed to the node service of its host is published under the
 * service's id ({@link NodeServiceId}) and resolves to the service's address for the blocks
 * Spark lists on that executor, also after Spark removed the executor: the service stays in
 * the directory. The read path sees one more (descriptor, address) pair and nothing else.
 */
public final class ShuffleTableCache {
  private final RpcEndpointRef master;
  private final RpcEndpointRef tableServer;
  private final ConcurrentHashMap<Integer, Table> tables = new ConcurrentHashMap<>();
  private final AtomicLong tableFetches = new AtomicLong();
  private final AtomicLong tableBytes = new AtomicLong();
  /** Directory of every executor's serving address; shared by all shuffles. */
  private volatile Map<String, PeerAddress> peers = Map.of();
  private volatile long peersVersion = -1;
  /** Executors that left the directory: Spark removed them, and ids are never reused. */
  private final Set<String> gone = ConcurrentHashMap.newKeySet();

  /** One shuffle's table; grows in place under its own lock, read without locking. */
  private static final class Table {
    final ConcurrentHashMap<Long, MapOutputDescriptor> byMapId = new ConcurrentHashMap<>();
    /** Map id of a handed-over output: the executor that handed it to its node service. */
    final ConcurrentHashMap<Long, String> handedOverBy = new ConcurrentHashMap<>();
    /** Log offset up to which this table holds the driver's records. */
    volatile long version;
    /** (map output, executor) pairs confirmed unregistered by a refresh. */
    final Set<String> misses = ConcurrentHashMap.newKeySet();
  }

  /** A resolved map output: its descriptor and where its executor serves. */
  public static final class Location {
    public final MapOutputDescriptor descriptor;
    public final PeerAddress peer;

    Location(MapOutputDescriptor descriptor, PeerAddress peer) {
      this.descriptor = descriptor;
      this.peer = peer;
    }
  }

  /** {@code master} takes publishes; {@code tableServer} answers table requests. */
  public ShuffleTableCache(RpcEndpointRef master, RpcEndpointRef tableServer) {
    this.master = master;
    this.tableServer = tableServer;
  }

  public void publish(MapOutputDescriptor d) {
    MetadataRpc.publish(master, d.shuffleId(), d.mapId(), DescriptorCodec.encodeEntry(d));
  }

  /**
   * Publishes an output executor {@code publisher} (this one) handed to the node service
   * named in {@code d} ({@link #announceService} first).
   */
  public void publishHandedOver(MapOutputDescriptor d, String publisher) {
    MetadataRpc.publishHandedOver(master, d.shuffleId(), d.mapId(), publisher,
        DescriptorCodec.encodeEntry(d));
  }

  /** Lists the node service at {@code address} in the driver's directory. */
  public void announceService(String executorId, PeerAddress address) {
    MetadataRpc.registerNodeService(master, executorId, address);
  }

  /**
   * Where map output {@code mapId} of {@code shuffleId} is registered on
   * {@code executorId}, or null if the driver knows no such registration even after a
   * refresh: the output was migrated there by executor decommissioning, is served by an
   * external shuffle service, or its executor is gone. The caller then fetches it the way
   * Spark would (see RdmaBlockStoreClient). One refresh per (shuffle, map output, executor)
   * at most, and it carries only what the driver learned since the last one; a confirmed
   * miss is remembered until the shuffle is forgotten (map ids are task attempt ids, so a
   * registration that is missing once is never published later).
   */
  public Location locateOrNull(int shuffleId, long mapId, String executorId) {
    Table t = tables.computeIfAbsent(shuffleId, id -> new Table());
    long seen = t.version;
    // Before the removal check: a removed executor's handed-over outputs still resolve.
    Location hit = find(t, mapId, executorId);
    if (hit != null) {
      return hit;
    }
    if (gone.contains(executorId)) {
      return null;
    }
    String missKey = mapId + "@" + executorId;
    if (t.misses.contains(missKey)) {
      return null;
    }
    refresh(shuffleId, t, seen);
    hit = find(t, mapId, executorId);
    if (hit == null) {
      MapOutputDescriptor d = t.byMapId.get(mapId);
      if (d != null && d.executorId().equals(executorId) && !peers.containsKey(executorId)) {
        // An executor registers its transport before it publishes: a descriptor without an
        // address in the fresh directory is of an executor Spark removed since.
        gone.add(executorId);
      } else {
        t.misses.add(missKey);
      }
    }
    return hit;
  }

  private Location find(Table t, long mapId, String executorId) {
    MapOutputDescriptor d = t.byMapId.get(mapId);
    if (d == null) {
      return null;
    }
    String server = d.executorId();
    // Handed over: served by the node service, but only for the executor that handed it
    // over (map ids come from the publisher; another executor's blocks never resolve here).
    if (!server.equals(executorId) && !executorId.equals(t.handedOverBy.get(mapId))) {
      return null;
    }
    PeerAddress peer = peers.get(server);
    return peer == null ? null : new Location(d, peer);
  }

  /**
   * Whether {@code executorId}, whose read just failed, has been removed by Spark: asks the
   * driver for what changed in shuffle {@code shuffleId}'s table and in the directory, and
   * answers true when the executor is no longer in the directory. From then on its outputs
   * resolve to nothing, in every shuffle. One round trip, unless the removal is known.
   */
  public boolean departed(int shuffleId, String executorId) {
    if (gone.contains(executorId)) {
      return true;
    }
    Table t = tables.computeIfAbsent(shuffleId, id -> new Table());
    refresh(shuffleId, t, t.version, true);
    if (!peers.containsKey(executorId)) {
      // It had an address (its read was attempted) and has none now: removed.
      gone.add(executorId);
    }
    return gone.contains(executorId);
  }

  /** Whether this cache knows {@code executorId} was removed (no question to the driver). */
  public boolean removed(String executorId) {
    return gone.contains(executorId);
  }

  private void refresh(int shuffleId, Table t, long seen) {
    refresh(shuffleId, t, seen, false);
  }

  /**
   * Brings {@code t} up to the driver's version unless another thread did since {@code seen}
   * ({@code force}: asks even then, for a directory that may have changed without the log).
   */
  private void refresh(int shuffleId, Table t, long seen, boolean force) {
    synchronized (t) {
      if (!force && t.version != seen) {
        return; // another task refreshed after our miss
      }
      seen = t.version;
      ShuffleTable reply = MetadataRpc.fetchTable(tableServer, shuffleId, seen, peersVersion);
      tableFetches.incrementAndGet();
      if (reply.from() != seen) {
        // The driver no longer has the log we followed (it forgot the shuffle): start over.
        t.byMapId.clear();
        t.handedOverBy.clear();
      }
      for (byte[] c : reply.chunks()) {
        tableBytes.addAndGet(c.length);
      }
      DescriptorCodec.apply(reply.chunks(), t.byMapId, t.handedOverBy);
      Map<String, PeerAddress> fresh = MetadataRpc.peersOf(reply);
      if (fresh != null) {
        synchronized (this) {
          // Two shuffles may refresh at once; the driver's versions only grow.
          if (reply.peersVersion() > peersVersion) {
            for (String id : peers.keySet()) {
              if (!fresh.containsKey(id)) {
                gone.add(id); // the driver drops an executor only when Spark removed it
              }
            }
            peers = Map.copyOf(fresh);
            peersVersion = reply.peersVersion();
          }
        }
      }
      t.version = reply.to();
    }
  }

  public void forget(int shuffleId) {
    tables.remove(shuffleId);
  }

  /** Tables fetched from the driver so far (metadata round trips). */
  public long tableFetches() {
    return tableFetches.get();
  }

  /** Descriptor table bytes received from the driver so far. */
  public long tableBytes() {
    return tableBytes.get();
  }
}
