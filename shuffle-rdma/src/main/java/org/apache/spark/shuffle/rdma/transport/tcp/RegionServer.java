/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.SecureRandom;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.StreamManager;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.TransportStats;

/**
 * The serving half of the tcp transport: the table of registered regions and the
 * network-common handler that answers reads against it. A read is served only if its key
 * names a live region and [address, address + length) lies inside that region; anything
 * else is refused with a ChunkFetchFailure that says why, and the connection stays up.
 */
final class RegionServer extends RpcHandler {
  private final ConcurrentHashMap<Integer, TcpRegion> regions = new ConcurrentHashMap<>();
  private final SecureRandom random = new SecureRandom();
  private final TransportStats stats;
  private final String appId;
  private final boolean authenticate;
  private final StreamManager streams = new Streams();

  RegionServer(TransportStats stats, String appId, boolean authenticate) {
    this.stats = stats;
    this.appId = appId;
    this.authenticate = authenticate;
  }

  /** Registers memory; {@code file} (may be null) is then owned by the region. */
  TcpRegion add(ByteBuffer memory, BackingCheck backing, FileChannel file, long fileOffset) {
    while (true) {
      // Keys are capabilities: unpredictable, never 0, unique among live regions.
      int key = random.nextInt();
      if (key == 0) {
        continue;
      }
      TcpRegion region = new TcpRegion(key, memory, backing, file, fileOffset);
      if (regions.putIfAbsent(key, region) == null) {
        return region;
      }
    }
  }

  void remove(TcpRegion region) {
    regions.remove(region.key(), region);
  }

  int liveRegions() {
    return regions.size();
  }

  @Override
  public StreamManager getStreamManager() {
    return streams;
  }

  @Override
  public void receive(TransportClient client, ByteBuffer message, RpcResponseCallback callback) {
    callback.onFailure(new UnsupportedOperationException(
        "the shuffle-rdma tcp transport answers one-sided reads only"));
  }

  /** Answers ChunkFetchRequests, which carry (key, address, length). */
  private final class Streams extends StreamManager {
    @Override
    public void checkAuthorization(TransportClient client, long streamId) {
      // With spark.authenticate the auth bootstrap sets the client id once the peer proved
      // it knows the secret; before that (or for another app) nothing is served.
      if (authenticate && (client.getClientId() == null || !client.getClientId().equals(appId))) {
        stats.readsRefused.incrementAndGet();
        throw new SecurityException("read refused: connection from " + client.getSocketAddress()
            + " is not authenticated for application " + appId);
      }
    }

    @Override
    public ManagedBuffer getChunk(long streamId, int length) {
      int key = ReadAddressing.key(streamId);
      long address = ReadAddressing.address(streamId);
      TcpRegion region = regions.get(key);
      if (region == null) {
        stats.readsRefused.incrementAndGet();
        throw new IllegalArgumentException(String.format(
            "read refused: key 0x%08x names no registered region (unknown or revoked)", key));
      }
      if (length <= 0 || address + length > region.length()) {
        stats.readsRefused.incrementAndGet();
        throw new IllegalArgumentException(String.format(
            "read refused: [%d, %d) is outside region 0x%08x of %d bytes",
            address, address + length, key, region.length()));
      }
      String problem = region.backing().problem();
      if (problem != null) {
        // Serving it would read pages past the file's end (or bytes that are not the map
        // output any more): refuse, so the reader reports a fetch failure and Spark recomputes.
        stats.readsRefused.incrementAndGet();
        throw new IllegalStateException(String.format("read refused: region 0x%08x: %s", key,
            problem));
      }
      if (!region.tryRetain()) {
        stats.readsRefused.incrementAndGet();
        throw new IllegalArgumentException(String.format(
            "read refused: key 0x%08x was revoked", key));
      }
      stats.readsServed.incrementAndGet();
      stats.bytesServed.addAndGet(length);
      return new RegionSliceBuffer(region, address, length);
    }
  }
}
