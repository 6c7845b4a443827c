/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.netty.channel.Channel;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.client.ChunkReceivedCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportResponseHandler;
import org.apache.spark.network.protocol.ChunkFetchRequest;
import org.apache.spark.network.protocol.StreamChunkId;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportStats;

/**
 * The reading half of the tcp transport towards one peer: a persistent, pipelined
 * connection with at most {@code maxInFlight} reads outstanding. A batch is written with one
 * flush. Two identical reads in flight at once share one request and its answer (Netty's
 * response handler keys outstanding fetches by their ids, and they would collide).
 *
 * <p>Reads that wait for room are sent in steps of a quarter of the window: once a quarter
 * of it has been answered, the waiting reads that fill it again go out with one flush.
 * Refilling one read per answer would cost the client a write system call per block and
 * hand the server one request per wake-up, each answered and flushed alone.
 *
 * <p>The channel owns its {@link TransportClient} alone: the response handler keeps one
 * callback per id, so a second channel on the same client could overwrite a callback and
 * leave a read without an answer forever.
 *
 * <p>A read sent {@code readTimeoutNanos} ago without an answer fails the whole channel (as on
 * verbs): the peer is stuck, so every read in flight or waiting behind it fails now, the
 * connection is closed, and the next {@code connect} opens a fresh one. Netty's idle timeout
 * alone does not do this: a peer that keeps the connection busy without answering (or a read
 * queued behind a stuck one) would wait forever.
 */
final class TcpChannel implements TransportChannel {
  /**
   * Longest read served in one response frame: network-common holds a frame in one Netty
   * buffer, and regions are at most 1 GiB anyway.
   */
  static final int FRAME_LIMIT = 1 << 30;

  private final PeerAddress peer;
  private final TransportClient client;
  private final int maxInFlight;
  /** Waiting reads are admitted only when at least this many would fit (see class doc). */
  private final int refillStep;
  private final int maxReadLength;
  private final long readTimeoutMs;
  private final TransportStats stats;

  // All guarded by this.
  private final ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
  private final HashMap<StreamChunkId, InFlight> inFlight = new HashMap<>();
  private IOException failure;

  /** The reads sharing one request on the wire, and when it was sent. */
  private static final class InFlight {
    final List<ReadRequest> waiters = new ArrayList<>(1);
    final long sentNanos;

    InFlight(long sentNanos) {
      this.sentNanos = sentNanos;
    }
  }

  TcpChannel(PeerAddress peer, TransportClient client, int maxInFlight, long maxReadSize,
      long readTimeoutMs,
      TransportStats stats) {
    this.peer = peer;
    this.client = client;
    this.maxInFlight = maxInFlight;
    this.refillStep = Math.max(1, maxInFlight / 4);
    this.maxReadLength = (int) Math.min(maxReadSize, FRAME_LIMIT);
    this.readTimeoutMs = readTimeoutMs;
    this.stats = stats;
  }

  @Override
  public PeerAddress peer() {
    return peer;
  }

  @Override
  public int maxReadLength() {
    return maxReadLength;
  }

  @Override
  public boolean isActive() {
    synchronized (this) {
      if (failure != null) {
        return false;
      }
    }
    return client.isActive();
  }

  @Override
  public void read(List<ReadRequest> batch) {
    List<StreamChunkId> toSend = new ArrayList<>(batch.size());
    List<ReadRequest> invalid = null;
    IOException failed;
    synchronized (this) {
      failed = failure;
      for (ReadRequest r : batch) {
        stats.readsPosted.incrementAndGet();
        if (failed != null || r.remoteAddress() < 0
            || r.remoteAddress() > ReadAddressing.MAX_ADDRESS) {
          if (invalid == null) {
            invalid = new ArrayList<>();
          }
          invalid.add(r);
          continue;
        }
        admitLocked(r, toSend);
      }
    }
    if (invalid != null) {
      for (ReadRequest r : invalid) {
        fail(r, failed != null ? failed
            : new IllegalArgumentException("tcp read address out of range: " + r));
      }
    }
    send(toSend);
  }

  private void admitLocked(ReadRequest r, List<StreamChunkId> toSend) {
    StreamChunkId id = new StreamChunkId(
        ReadAddressing.streamId(r.key(), r.remoteAddress()), r.length());
    InFlight same = inFlight.get(id);
    if (same != null) {
      same.waiters.add(r);
    } else if (inFlight.size() >= maxInFlight) {
      waiting.add(r);
    } else {
      InFlight f = new InFlight(System.nanoTime());
      f.waiters.add(r);
      inFlight.put(id, f);
      toSend.add(id);
    }
  }

  private void send(List<StreamChunkId> ids) {
    if (ids.isEmpty()) {
      return;
    }
    Channel channel = client.getChannel();
    TransportResponseHandler handler = client.getHandler();
    for (StreamChunkId id : ids) {
      handler.addFetchRequest(id, new ChunkReceivedCallback() {
        @Override
        public void onSuccess(int chunkIndex, ManagedBuffer buffer) {
          complete(id, buffer, null);
        }

        @Override
        public void onFailure(int chunkIndex, Throwable e) {
          complete(id, null, e);
        }
      });
      channel.write(new ChunkFetchRequest(id)).addListener(f -> {
        if (!f.isSuccess()) {
          handler.removeFetchRequest(id);
          complete(id, null, new IOException("failed to send read to " + peer, f.cause()));
        }
      });
    }
    channel.flush();
    stats.batchesPosted.incrementAndGet();
  }

  private void complete(StreamChunkId id, ManagedBuffer data, Throwable error) {
    InFlight done;
    List<StreamChunkId> toSend = new ArrayList<>();
    synchronized (this) {
      done = inFlight.remove(id);
      if (inFlight.size() <= maxInFlight - refillStep) {
        while (failure == null && !waiting.isEmpty() && inFlight.size() < maxInFlight) {
          admitLocked(waiting.poll(), toSend);
        }
      }
    }
    if (done != null) {
      for (ReadRequest r : done.waiters) {
        if (error == null) {
          stats.readsCompleted.incrementAndGet();
          stats.bytesRead.addAndGet(r.length());
          try {
            r.callback().onSuccess(r, data);
          } catch (RuntimeException e) {
            fail(r, e);
          }
        } else {
          fail(r, new IOException(r + " from " + peer + " failed: "
              + error.getMessage(), error));
        }
      }
    }
    send(toSend);
  }

  private void fail(ReadRequest r, Throwable e) {
    stats.readsFailed.incrementAndGet();
    r.callback().onFailure(r, e);
  }

  /**
   * Called periodically by the transport: if the oldest read in flight was sent more than
   * the read timeout ago, fails the channel.
   */
  void checkTimeout(long nowNanos) {
    long oldest = Long.MAX_VALUE;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      for (InFlight f : inFlight.values()) {
        oldest = Math.min(oldest, f.sentNanos);
      }
    }
    if (oldest != Long.MAX_VALUE && nowNanos - oldest > readTimeoutMs * 1_000_000L) {
      failChannel(new IOException("read from " + peer + " got no answer within "
          + readTimeoutMs + " ms (spark.shuffle.rdma.readTimeout)"));
    }
  }

  /** Fails every read in flight or waiting, closes the connection; later reads fail at once. */
  void failChannel(IOException cause) {
    List<ReadRequest> dropped = new ArrayList<>();
    List<StreamChunkId> ids;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = cause;
      ids = new ArrayList<>(inFlight.keySet());
      for (Map.Entry<StreamChunkId, InFlight> e : inFlight.entrySet()) {
        dropped.addAll(e.getValue().waiters);
      }
      inFlight.clear();
      dropped.addAll(waiting);
      waiting.clear();
    }
    TransportResponseHandler handler = client.getHandler();
    for (StreamChunkId id : ids) {
      // A late answer is then dropped by the handler instead of reaching a finished read.
      handler.removeFetchRequest(id);
    }
    client.close();
    for (ReadRequest r : dropped) {
      fail(r, cause);
    }
  }
}
