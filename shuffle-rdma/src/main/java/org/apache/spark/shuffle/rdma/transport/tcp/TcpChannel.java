/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NettyManagedBuffer;
import org.apache.spark.network.client.ChunkReceivedCallback;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportResponseHandler;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRefusedException;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportStats;

/**
 * The reading half of the tcp transport towards one peer: a persistent, pipelined
 * connection with at most {@code maxInFlight} reads outstanding. Reads go in batches (see
 * {@link ReadBatch}): one request and one answer frame per batch, each read served or refused
 * on its own. What one {@code read} call admits is written with one flush.
 *
 * <p>A batch holds at most a quarter of the window (and {@link ReadBatch#MAX_READS}), and
 * stops growing at {@link ReadBatch#TARGET_BYTES}, so several batches are in flight and the
 * server always has the next one while the client takes in the last. Reads that wait for
 * room are sent in steps of a quarter of the window: once a quarter of it has been answered,
 * the waiting reads that fill it again go out with one flush. Refilling one read per answer
 * would cost the client a write system call per block and the server a wake-up per read.
 *
 * <p>The channel owns its {@link TransportClient} alone: the response handler keeps one
 * callback per id, and this channel chooses its batch ids itself.
 *
 * <p>A batch sent {@code readTimeoutNanos} ago without an answer fails the whole channel (as
 * on verbs): the peer is stuck, so every read in flight or waiting behind it fails now, the
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
  private final int batchReads;
  private final int maxReadLength;
  private final long readTimeoutMs;
  private final TransportStats stats;

  // All guarded by this.
  private final ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
  private final HashMap<Long, Batch> inFlight = new HashMap<>();
  private int readsInFlight;
  private long lastBatchId;
  private IOException failure;

  /** The reads of one batch on the wire, and when it was sent. */
  private static final class Batch {
    final long id;
    final List<ReadRequest> reads;
    final long sentNanos;

    Batch(long id, List<ReadRequest> reads, long sentNanos) {
      this.id = id;
      this.reads = reads;
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
    this.batchReads = Math.min(ReadBatch.MAX_READS, refillStep);
    this.maxReadLength = (int) Math.min(maxReadSize, FRAME_LIMIT);
    this.readTimeoutMs = readTimeoutMs;
    this.stats = stats;
  }

  /** The Netty channel of this connection (for tests that misbehave on it). */
  io.netty.channel.Channel nettyChannel() {
    return client.getChannel();
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
  public void read(List<ReadRequest> reads) {
    List<ReadRequest> invalid = null;
    List<Batch> toSend;
    IOException failed;
    synchronized (this) {
      failed = failure;
      List<ReadRequest> admitted = new ArrayList<>(reads.size());
      for (ReadRequest r : reads) {
        stats.readsPosted.incrementAndGet();
        if (failed != null || r.remoteAddress() < 0) {
          if (invalid == null) {
            invalid = new ArrayList<>();
          }
          invalid.add(r);
        } else if (readsInFlight >= maxInFlight) {
          waiting.add(r);
        } else {
          admitted.add(r);
          readsInFlight++;
        }
      }
      toSend = packLocked(admitted);
    }
    if (invalid != null) {
      for (ReadRequest r : invalid) {
        fail(r, failed != null ? failed
            : new IllegalArgumentException("tcp read address out of range: " + r));
      }
    }
    send(toSend);
  }

  /** Cuts admitted reads into batches and records them as in flight. */
  private List<Batch> packLocked(List<ReadRequest> admitted) {
    if (admitted.isEmpty()) {
      return List.of();
    }
    List<Batch> batches = new ArrayList<>();
    long now = System.nanoTime();
    List<ReadRequest> current = new ArrayList<>(Math.min(batchReads, admitted.size()));
    long bytes = 0;
    for (ReadRequest r : admitted) {
      if (!current.isEmpty()
          && (current.size() == batchReads || bytes + r.length() > ReadBatch.TARGET_BYTES)) {
        batches.add(newBatchLocked(current, now));
        current = new ArrayList<>(batchReads);
        bytes = 0;
      }
      current.add(r);
      bytes += r.length();
    }
    batches.add(newBatchLocked(current, now));
    return batches;
  }

  private Batch newBatchLocked(List<ReadRequest> reads, long now) {
    do {
      lastBatchId = lastBatchId % ReadBatch.MAX_BATCH_ID + 1;
    } while (inFlight.containsKey(lastBatchId));
    Batch b = new Batch(lastBatchId, reads, now);
    inFlight.put(b.id, b);
    return b;
  }

  private void send(List<Batch> batches) {
    if (batches.isEmpty()) {
      return;
    }
    Channel channel = client.getChannel();
    TransportResponseHandler handler = client.getHandler();
    for (Batch b : batches) {
      long id = b.id;
      handler.addFetchRequest(ReadBatch.answerId(id), new ChunkReceivedCallback() {
        @Override
        public void onSuccess(int chunkIndex, ManagedBuffer buffer) {
          answered(id, buffer, null);
        }

        @Override
        public void onFailure(int chunkIndex, Throwable e) {
          answered(id, null, e);
        }
      });
      // The server answers a batch with the frame above; its RPC gets an answer only when
      // the whole batch is refused (malformed, or by Spark's auth layer).
      handler.addRpcRequest(id, new RpcResponseCallback() {
        @Override
        public void onSuccess(ByteBuffer response) {
          answered(id, null, new IOException("the peer answered a read batch as an RPC"));
        }

        @Override
        public void onFailure(Throwable e) {
          if (e instanceof IOException) {
            answered(id, null, e); // the connection closed under the batch: not a refusal
            return;
          }
          // network-common sends the server's whole stack trace: its first line says why.
          String why = String.valueOf(e.getMessage());
          int eol = why.indexOf('\n');
          answered(id, null, new ReadRefusedException("the peer refused the batch: "
              + (eol < 0 ? why : why.substring(0, eol)), e));
        }
      });
      ByteBuf frame = ReadBatch.encodeRequestFrame(channel.alloc(), id, b.reads);
      channel.write(frame).addListener(f -> {
        if (!f.isSuccess()) {
          answered(id, null, new IOException("failed to send reads to " + peer, f.cause()));
        }
      });
    }
    channel.flush();
    stats.batchesPosted.incrementAndGet();
  }

  private void answered(long id, ManagedBuffer data, Throwable error) {
    Batch done;
    List<Batch> toSend = List.of();
    synchronized (this) {
      done = inFlight.remove(id);
      if (done == null) {
        return; // answered already (the other callback), or failed with the channel
      }
      readsInFlight -= done.reads.size();
      if (readsInFlight <= maxInFlight - refillStep) {
        List<ReadRequest> admitted = new ArrayList<>();
        while (failure == null && !waiting.isEmpty() && readsInFlight < maxInFlight) {
          admitted.add(waiting.poll());
          readsInFlight++;
        }
        toSend = packLocked(admitted);
      }
    }
    TransportResponseHandler handler = client.getHandler();
    handler.removeFetchRequest(ReadBatch.answerId(id));
    handler.removeRpcRequest(id);
    if (error == null) {
      deliver(done, data);
    } else {
      for (ReadRequest r : done.reads) {
        fail(r, new IOException(r + " from " + peer + " failed: " + error.getMessage(), error));
      }
    }
    send(toSend);
  }

  /** Hands each read its slice of the answer (no copy), or its refusal. */
  private void deliver(Batch b, ManagedBuffer data) {
    List<ReadRequest> reads = b.reads;
    ByteBuf body;
    try {
      body = (ByteBuf) data.convertToNetty();
    } catch (IOException | RuntimeException e) {
      for (ReadRequest r : reads) {
        fail(r, new IOException(r + " from " + peer + " failed: " + e, e));
      }
      return;
    }
    try {
      int[] lengths = new int[reads.size()];
      String[] reasons = new String[reads.size()];
      int at;
      try {
        at = body.readerIndex() + ReadBatch.parseAnswer(body, reads, lengths, reasons);
      } catch (IllegalArgumentException e) {
        for (ReadRequest r : reads) {
          fail(r, new IOException(r + " from " + peer + " failed: malformed answer: "
              + e.getMessage(), e));
        }
        return;
      }
      for (int i = 0; i < reads.size(); i++) {
        ReadRequest r = reads.get(i);
        if (lengths[i] == ReadBatch.REFUSED) {
          fail(r, new ReadRefusedException(r + " from " + peer + " failed: " + reasons[i]));
          continue;
        }
        ManagedBuffer part = new NettyManagedBuffer(body.retainedSlice(at, lengths[i]));
        at += lengths[i];
        stats.readsCompleted.incrementAndGet();
        stats.bytesRead.addAndGet(r.length());
        try {
          r.callback().onSuccess(r, part);
        } catch (RuntimeException e) {
          fail(r, e);
        } finally {
          part.release();
        }
      }
    } finally {
      body.release();
    }
  }

  private void fail(ReadRequest r, Throwable e) {
    stats.readsFailed.incrementAndGet();
    r.callback().onFailure(r, e);
  }

  /**
   * Called periodically by the transport: if the oldest batch in flight was sent more than
   * the read timeout ago, fails the channel.
   */
  void checkTimeout(long nowNanos) {
    long oldest = Long.MAX_VALUE;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      for (Batch b : inFlight.values()) {
        oldest = Math.min(oldest, b.sentNanos);
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
    List<Long> ids;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = cause;
      ids = new ArrayList<>(inFlight.keySet());
      for (Batch b : inFlight.values()) {
        dropped.addAll(b.reads);
      }
      inFlight.clear();
      readsInFlight = 0;
      dropped.addAll(waiting);
      waiting.clear();
    }
    TransportResponseHandler handler = client.getHandler();
    for (long id : ids) {
      // A late answer is then dropped by the handler instead of reaching a finished read.
      handler.removeFetchRequest(ReadBatch.answerId(id));
      handler.removeRpcRequest(id);
    }
    client.close();
    for (ReadRequest r : dropped) {
      fail(r, cause);
    }
  }
}
