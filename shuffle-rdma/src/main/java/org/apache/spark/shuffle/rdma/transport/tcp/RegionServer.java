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
import java.util.concurrent.atomic.AtomicLong;

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
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serving half of the tcp transport: the table of registered regions and the
 * network-common handler that answers batches of reads against it (RpcRequests, see
 * {@link ReadBatch}; the only request it answers). A read is served only if its key names a
 * live region, the upper half of its address is that region's, and the range lies inside
 * the region; anything else is refused with one text that tells nothing about why (see
 * {@link Refusal#NO_SUCH_BYTES}), only that read fails, and the connection stays up unless
 * its refusals look like a key scan (see {@link #MAX_REFUSALS}).
 *
 * <p>The capability a reader presents is 63 random bits: the 32-bit key and the upper 31
 * bits of the region's base address (a region's bytes sit at base + offset, offsets below
 * 2^32), both from SecureRandom. A connection reads only once {@link PeerState#authenticated}
 * (set by {@link AuthGate} when Spark's auth handler completed, with spark.authenticate).
 */
final class RegionServer extends RpcHandler {
  private static final Logger LOG = LoggerFactory.getLogger(RegionServer.class);
  /**
   * A connection with more than MAX_REFUSALS refused reads, and more than
   * REFUSALS_PER_SERVED refused per served read, is closed: a key scan. A reader that holds
   * live capabilities is refused only for revoked regions (a shuffle cleaned up under it).
   */
  static final int MAX_REFUSALS = 1024;
  static final int REFUSALS_PER_SERVED = 16;

  private final ConcurrentHashMap<Integer, TcpRegion> regions = new ConcurrentHashMap<>();
  private final SecureRandom random = new SecureRandom();
  private final TransportStats stats;
  private final String appId;
  private final boolean authenticate;
  private final long maxSingleRead;
  private final AnswerFlow flow;
  private final StreamManager streams = new NoStreams();
  final AtomicLong connectionsClosed = new AtomicLong();

  RegionServer(TransportStats stats, String appId, boolean authenticate, long maxSingleRead,
      AnswerFlow flow) {
    this.stats = stats;
    this.appId = appId;
    this.authenticate = authenticate;
    this.maxSingleRead = maxSingleRead;
    this.flow = flow;
  }

  /** Registers memory; {@code file} (may be null) is then owned by the region. */
  TcpRegion add(ByteBuffer memory, BackingCheck backing, FileChannel file, long fileOffset) {
    while (true) {
      // Keys are capabilities: unpredictable, never 0, unique among live regions; the base
      // address adds 31 more unpredictable bits.
      int key = random.nextInt();
      if (key == 0) {
        continue;
      }
      long base = (long) (1 + random.nextInt(Integer.MAX_VALUE)) << 32;
      TcpRegion region = new TcpRegion(key, base, memory, backing, file, fileOffset);
      if (regions.putIfAbsent(key, region) == null) {
        return region;
      }
    }
  }

  /**
   * Registers memory under a capability given back (a restarted node service's): null when
   * the key is 0, the base is not one {@link #add} could have chosen, or the key is live.
   */
  TcpRegion addAt(int key, long base, ByteBuffer memory, BackingCheck backing,
      FileChannel file, long fileOffset) {
    if (key == 0 || (base & 0xFFFFFFFFL) != 0 || base <= 0) {
      return null;
    }
    TcpRegion region = new TcpRegion(key, base, memory, backing, file, fileOffset);
    return regions.putIfAbsent(key, region) == null ? region : null;
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
   * refused on its own. A malformed batch, or one from a connection that may not read,
   * gets a one-line RpcFailure and its connection is closed.
   */
  @Override
  public void receive(TransportClient client, ByteBuffer message, RpcResponseCallback callback) {
    Channel channel = client.getChannel();
    PeerState peer = PeerState.of(channel);
    ReadBatch.Request req;
    try {
      if (peer == null || !peer.authenticated
          || (authenticate && !appId.equals(client.getClientId()))) {
        throw new Refusal("read refused: the connection is not authenticated for this "
            + "application");
      }
      req = ReadBatch.decodeRequest(message, maxSingleRead);
    } catch (RuntimeException e) {
      stats.readsRefused.incrementAndGet();
      logClose(channel, e.getMessage());
      callback.onFailure(e instanceof Refusal ? e : new Refusal(String.valueOf(e.getMessage())));
      closeAfterAnswers(channel);
      return;
    }
    int n = req.size();
    ByteBuf prefix = channel.alloc().directBuffer(4 + 4 * n);
    List<RegionSliceBuffer> parts = new ArrayList<>(n);
    prefix.writeInt(n);
    BackingMemo memo = new BackingMemo();
    for (int i = 0; i < n; i++) {
      try {
        RegionSliceBuffer part = serve(req.keys[i], req.addresses[i], req.lengths[i], memo);
        parts.add(part);
        prefix.writeInt(req.lengths[i]);
        peer.served++;
      } catch (Refusal e) {
        stats.readsRefused.incrementAndGet();
        peer.refusals++;
        ReadBatch.writeRefusal(prefix, e.getMessage());
      }
    }
    BatchAnswer answer = new BatchAnswer(prefix, parts);
    long bytes = answer.size(); // the prefix and every served read
    flow.queued(channel, peer, bytes);
    channel.writeAndFlush(new ChunkFetchSuccess(ReadBatch.answerId(req.batchId), answer))
        .addListener(f -> {
          flow.done(channel, peer, bytes, f.isSuccess());
          if (!f.isSuccess()) {
            answer.release(); // dropped before the encoder took it; else a no-op
          }
        });
    if (peer.refusals > MAX_REFUSALS && peer.refusals > REFUSALS_PER_SERVED * peer.served) {
      logClose(channel, peer.refusals + " reads refused, " + peer.served + " served");
      closeAfterAnswers(channel);
    }
  }

  /**
   * Closes once the answers already written are flushed: flushes are held until the end of
   * the read burst (FlushConsolidationHandler), and tasks run after it.
   */
  private static void closeAfterAnswers(Channel channel) {
    channel.eventLoop().execute(channel::close);
  }

  private void logClose(Channel channel, String why) {
    long c = connectionsClosed.incrementAndGet();
    if (RareLog.due(c)) {
      LOG.warn("tcp transport: closed the connection from {}: {}; {} closed so far",
          channel.remoteAddress(), why, c);
    }
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
   * throws a Refusal when it is refused. {@code memo} carries the last backing-file check
   * across one batch.
   */
  private RegionSliceBuffer serve(int key, long address, int length, BackingMemo memo) {
    TcpRegion region = regions.get(key);
    long offset = region == null ? -1 : address - region.address();
    // One test, one text: a prober learns neither whether the key is live nor the size.
    if (region == null || offset < 0 || offset > TcpRegion.MAX_OFFSET || length <= 0
        || offset + length > region.length()) {
      throw new Refusal(Refusal.NO_SUCH_BYTES);
    }
    String problem = memo.problem(region);
    if (problem != null) {
      // Serving it would read pages past the file's end (or bytes that are not the map
      // output any more): refuse, so the reader reports a fetch failure and Spark
      // recomputes. Only a reader holding the live capability gets this far.
      throw new Refusal("read refused: " + problem);
    }
    if (!region.tryRetain()) {
      throw new Refusal(Refusal.NO_SUCH_BYTES); // revoked meanwhile
    }
    stats.readsServed.incrementAndGet();
    stats.bytesServed.addAndGet(length);
    return new RegionSliceBuffer(region, offset, length);
  }

  /**
   * network-common's single-read path (ChunkFetchRequest) is not served: the plugin's client
   * sends batches only, and InboundGuard closes a connection that sends anything else.
   */
  private static final class NoStreams extends StreamManager {
    @Override
    public void checkAuthorization(TransportClient client, long streamId) {
      throw new Refusal("single reads are not served");
    }

    @Override
    public ManagedBuffer getChunk(long streamId, int chunkIndex) {
      throw new Refusal("single reads are not served");
    }
  }
}
