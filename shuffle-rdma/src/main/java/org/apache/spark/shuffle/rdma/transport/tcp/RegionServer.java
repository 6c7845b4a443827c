/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.protocol.ChunkFetchSuccess;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.StreamManager;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.TransportStats;

/**
 * The serving half of the tcp transport: the table of registered regions and the
 * network-common handler that answers reads against it: batches of reads (RpcRequests, see
 * {@link ReadBatch}), which the plugin's client sends, and single reads (ChunkFetchRequests).
 * A read is served only if its key names a live region and [address, address + length) lies
 * inside that region; anything else is refused with a reason (in the batch's answer, or a
 * ChunkFetchFailure), only that read fails, and the connection stays up.
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

  /**
   * Answers a batch of reads (see {@link ReadBatch}) with one frame: each read is served or
   * refused on its own, exactly as a single read would be. A malformed batch is refused whole
   * with an RpcFailure; nothing else answers the RPC.
   */
  @Override
  public void receive(TransportClient client, ByteBuffer message, RpcResponseCallback callback) {
    ReadBatch.Request req;
    try {
      req = ReadBatch.decodeRequest(message);
    } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
      stats.readsRefused.incrementAndGet();
      callback.onFailure(e instanceof IllegalArgumentException ? e
          : new IllegalArgumentException("malformed read batch", e));
      return;
    }
    int n = req.size();
    Channel channel = client.getChannel();
    ByteBuf prefix = channel.alloc().directBuffer(4 + 4 * n);
    List<RegionSliceBuffer> parts = new ArrayList<>(n);
    prefix.writeInt(n);
    String unauthorized = unauthorized(client);
    BackingMemo memo = new BackingMemo();
    for (int i = 0; i < n; i++) {
      try {
        if (unauthorized != null) {
          stats.readsRefused.incrementAndGet();
          throw new SecurityException(unauthorized);
        }
        RegionSliceBuffer part = serve(req.keys[i], req.addresses[i], req.lengths[i], memo);
        parts.add(part);
        prefix.writeInt(req.lengths[i]);
      } catch (RuntimeException e) {
        ReadBatch.writeRefusal(prefix, e.getMessage() != null ? e.getMessage() : e.toString());
      }
    }
    BatchAnswer answer = new BatchAnswer(prefix, parts);
    channel.writeAndFlush(new ChunkFetchSuccess(ReadBatch.answerId(req.batchId), answer))
        .addListener(f -> {
          if (!f.isSuccess()) {
            answer.release(); // dropped before the encoder took it; else a no-op
          }
        });
  }

  /** Null when the connection may read, else why not (spark.authenticate). */
  private String unauthorized(TransportClient client) {
    // With spark.authenticate the auth bootstrap sets the client id once the peer proved it
    // knows the secret; before that (or for another app) nothing is served.
    if (authenticate && (client.getClientId() == null || !client.getClientId().equals(appId))) {
      return "read refused: connection from " + client.getSocketAddress()
          + " is not authenticated for application " + appId;
    }
    return null;
  }

  /**
   * The backing-file check of the region a batch read last: a batch's reads of one map
   * output (a reducer's blocks of it, or several reducers') share one stat of its file.
   */
  private static final class BackingMemo {
    TcpRegion region;
    String problem;

    String problem(TcpRegion r) {
      if (r != region) {
        region = r;
        problem = r.backing().problem();
      }
      return problem;
    }
  }

  /**
   * Checks one read against the live regions and takes a region reference for its answer;
   * throws, with the reason, when it is refused (counted). {@code memo} (may be null) carries
   * the last backing-file check across one batch.
   */
  private RegionSliceBuffer serve(int key, long address, int length, BackingMemo memo) {
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
    String problem = memo != null ? memo.problem(region) : region.backing().problem();
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

  /** Answers single reads: ChunkFetchRequests, which carry (key, address, length). */
  private final class Streams extends StreamManager {
    @Override
    public void checkAuthorization(TransportClient client, long streamId) {
      String unauthorized = unauthorized(client);
      if (unauthorized != null) {
        stats.readsRefused.incrementAndGet();
        throw new SecurityException(unauthorized);
      }
    }

    @Override
    public ManagedBuffer getChunk(long streamId, int length) {
      return serve(ReadAddressing.key(streamId), ReadAddressing.address(streamId), length,
          null);
    }
  }
}
