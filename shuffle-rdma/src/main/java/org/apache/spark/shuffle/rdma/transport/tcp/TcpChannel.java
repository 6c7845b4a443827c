package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

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
  private final int maxReadLength;
  private final TransportStats stats;

  // All guarded by this.
  private final ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
  private final HashMap<StreamChunkId, List<ReadRequest>> inFlight = new HashMap<>();

  TcpChannel(PeerAddress peer, TransportClient client, int maxInFlight, long maxReadSize,
      TransportStats stats) {
    this.peer = peer;
    this.client = client;
    this.maxInFlight = maxInFlight;
    this.maxReadLength = (int) Math.min(maxReadSize, FRAME_LIMIT);
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
    return client.isActive();
  }

  @Override
  public void read(List<ReadRequest> batch) {
    List<StreamChunkId> toSend = new ArrayList<>(batch.size());
    List<ReadRequest> invalid = null;
    synchronized (this) {
      for (ReadRequest r : batch) {
        stats.readsPosted.incrementAndGet();
        if (r.remoteAddress() < 0 || r.remoteAddress() > ReadAddressing.MAX_ADDRESS) {
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
        fail(r, new IllegalArgumentException("tcp read address out of range: " + r));
      }
    }
    send(toSend);
  }

  private void admitLocked(ReadRequest r, List<StreamChunkId> toSend) {
    StreamChunkId id = new StreamChunkId(
        ReadAddressing.streamId(r.key(), r.remoteAddress()), r.length());
    List<ReadRequest> same = inFlight.get(id);
    if (same != null) {
      same.add(r);
    } else if (inFlight.size() >= maxInFlight) {
      waiting.add(r);
    } else {
      List<ReadRequest> waiters = new ArrayList<>(1);
      waiters.add(r);
      inFlight.put(id, waiters);
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
    List<ReadRequest> waiters;
    List<StreamChunkId> toSend = new ArrayList<>();
    synchronized (this) {
      waiters = inFlight.remove(id);
      while (!waiting.isEmpty() && inFlight.size() < maxInFlight) {
        admitLocked(waiting.poll(), toSend);
      }
    }
    if (waiters != null) {
      for (ReadRequest r : waiters) {
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

  /** Fails reads that never left this channel; Netty fails the sent ones on close. */
  void failPending(Throwable cause) {
    List<ReadRequest> dropped;
    synchronized (this) {
      dropped = new ArrayList<>(waiting);
      waiting.clear();
    }
    for (ReadRequest r : dropped) {
      fail(r, cause);
    }
  }
}
