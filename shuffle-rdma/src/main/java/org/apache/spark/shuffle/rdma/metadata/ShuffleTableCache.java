package org.apache.spark.shuffle.rdma.metadata;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * An executor's view of the metadata plane: publishes its own descriptors and caches, per
 * shuffle, the descriptor table and peer addresses fetched from the driver. A lookup that
 * misses refreshes the table once (a map output committed after the last fetch, or a stage
 * retry); concurrent misses of one shuffle share one refresh.
 */
public final class ShuffleTableCache {
  private final RpcEndpointRef master;
  private final ConcurrentHashMap<Integer, Table> tables = new ConcurrentHashMap<>();
  private final AtomicLong tableFetches = new AtomicLong();

  /** One fetched table; immutable. */
  private static final class Table {
    final Map<Long, MapOutputDescriptor> byMapId;
    final Map<String, PeerAddress> peers;
    final long generation;
    /** (map output, executor) pairs confirmed unregistered after this table was fetched. */
    final java.util.Set<String> misses = ConcurrentHashMap.newKeySet();

    Table(Map<Long, MapOutputDescriptor> byMapId, Map<String, PeerAddress> peers,
        long generation) {
      this.byMapId = byMapId;
      this.peers = peers;
      this.generation = generation;
    }
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

  public ShuffleTableCache(RpcEndpointRef master) {
    this.master = master;
  }

  public void publish(MapOutputDescriptor d) {
    MetadataRpc.publish(master, d.shuffleId(), d.mapId(), DescriptorCodec.encodeEntry(d));
  }

  /**
   * Where map output {@code mapId} of {@code shuffleId} is registered on
   * {@code executorId}, or null if the driver knows no such registration even after a
   * refresh: the output was migrated there by executor decommissioning, is served by an
   * external shuffle service, or its executor is gone. The caller then fetches it the way
   * Spark would (see RdmaBlockStoreClient). One refresh per (shuffle, map output, executor)
   * at most: a confirmed miss is remembered for the table's lifetime.
   */
  public Location locateOrNull(int shuffleId, long mapId, String executorId) {
    Table t = tables.get(shuffleId);
    Location hit = t == null ? null : find(t, mapId);
    if (hit != null && hit.descriptor.executorId().equals(executorId)) {
      return hit;
    }
    if (t != null && t.misses.contains(missKey(mapId, executorId))) {
      return null;
    }
    t = refresh(shuffleId, t == null ? -1 : t.generation);
    hit = find(t, mapId);
    if (hit != null && hit.descriptor.executorId().equals(executorId)) {
      return hit;
    }
    t.misses.add(missKey(mapId, executorId));
    return null;
  }

  private static String missKey(long mapId, String executorId) {
    return mapId + "@" + executorId;
  }

  private static Location find(Table t, long mapId) {
    MapOutputDescriptor d = t.byMapId.get(mapId);
    if (d == null) {
      return null;
    }
    PeerAddress peer = t.peers.get(d.executorId());
    return peer == null ? null : new Location(d, peer);
  }

  private Table refresh(int shuffleId, long seenGeneration) {
    synchronized (lockFor(shuffleId)) {
      Table current = tables.get(shuffleId);
      if (current != null && current.generation > seenGeneration) {
        return current; // another task refreshed after our miss
      }
      ShuffleTable reply = MetadataRpc.fetchTable(master, shuffleId);
      long generation = tableFetches.incrementAndGet();
      Map<Long, MapOutputDescriptor> byMapId = new HashMap<>();
      for (MapOutputDescriptor d : DescriptorCodec.decodeAll(reply.table())) {
        byMapId.put(d.mapId(), d);
      }
      Table fresh = new Table(byMapId, new HashMap<>(MetadataRpc.peersOf(reply)), generation);
      tables.put(shuffleId, fresh);
      return fresh;
    }
  }

  private final ConcurrentHashMap<Integer, Object> locks = new ConcurrentHashMap<>();

  private Object lockFor(int shuffleId) {
    return locks.computeIfAbsent(shuffleId, id -> new Object());
  }

  public void forget(int shuffleId) {
    tables.remove(shuffleId);
    locks.remove(shuffleId);
  }

  /** Tables fetched from the driver so far (metadata round trips). */
  public long tableFetches() {
    return tableFetches.get();
  }
}
