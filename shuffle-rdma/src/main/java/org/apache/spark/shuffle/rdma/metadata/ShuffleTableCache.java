package org.apache.spark.shuffle.rdma.metadata;

import java.io.IOException;
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
   * Where map output {@code mapId} of {@code shuffleId} lives.
   *
   * @throws IOException if the driver knows no registration for it even after a refresh
   *     (its executor was lost, or the output was never registered).
   */
  public Location locate(int shuffleId, long mapId, String executorId) throws IOException {
    Table t = tables.get(shuffleId);
    Location hit = t == null ? null : find(t, mapId);
    if (hit == null) {
      t = refresh(shuffleId, t == null ? -1 : t.generation);
      hit = find(t, mapId);
    }
    if (hit == null) {
      throw new IOException("no registered map output " + mapId + " of shuffle " + shuffleId
          + " on executor " + executorId + " (lost executor or unregistered output)");
    }
    if (!hit.descriptor.executorId().equals(executorId)) {
      throw new IOException("map output " + mapId + " of shuffle " + shuffleId
          + " is registered on executor " + hit.descriptor.executorId()
          + ", but Spark expects it on " + executorId);
    }
    return hit;
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
