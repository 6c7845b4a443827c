/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.VerbsSizing;

/**
 * The reading side's connections: it opens the queue pairs this executor READs through (one
 * per peer and lane), shares each among all tasks, replaces a broken lane on demand, and
 * tears outbound connections down. The handshake of each connection is an
 * {@link OutboundConnection} on the RDMA-CM thread; the reads are its {@link VerbsChannel}.
 * Every cm id is created, connected and destroyed on the {@link CmEventLoop}.
 */
final class VerbsConnector {
  private static final int MIN_DEPTH = 16;

  private final RdmaShuffleConf conf;
  private final TransportStats stats;
  private final RdmaEventChannel eventChannel;
  private final CmEventLoop cm;
  private final long contextHandle;
  private final String bindIp;
  private final VerbsMemory memory;
  private final CompletionAgent[] agents;
  private final CallbackDispatcher callbacks;
  /** Connection authentication; null without spark.authenticate. */
  private final ConnectAuth auth;
  /** This device's READ depth maxima, from ibv_query_device. */
  private final ReadDepth.Device device;
  /** Queue pairs (lanes) this executor opens to each peer. */
  private final int queuePairsPerPeer;
  private final int maxReadLength;
  private final AtomicInteger nextAgent = new AtomicInteger();

  private final Object lock = new Object();
  private final Map<QpKey, VerbsChannel> channels = new HashMap<>(); // lock
  private final Map<QpKey, CompletableFuture<VerbsChannel>> connecting = new HashMap<>(); // lock
  /** With more than one queue pair per peer: the shared striped channel of each peer. */
  private final Map<PeerAddress, StripedChannel> stripes = new HashMap<>(); // lock
  private final Set<VerbsChannel> all = ConcurrentHashMap.newKeySet();
  private volatile boolean closed; // written under lock

  VerbsConnector(RdmaShuffleConf conf, TransportStats stats, RdmaEventChannel eventChannel,
      CmEventLoop cm, long contextHandle, String bindIp, VerbsMemory memory,
      CompletionAgent[] agents, CallbackDispatcher callbacks, ConnectAuth auth,
      ReadDepth.Device device, int queuePairsPerPeer) {
    this.conf = conf;
    this.stats = stats;
    this.eventChannel = eventChannel;
    this.cm = cm;
    this.contextHandle = contextHandle;
    this.bindIp = bindIp;
    this.memory = memory;
    this.agents = agents;
    this.callbacks = callbacks;
    this.auth = auth;
    this.device = device;
    this.queuePairsPerPeer = queuePairsPerPeer;
    this.maxReadLength = VerbsSizing.maxReadLength(memory.pool().capacity(), conf.maxReadSize());
  }

  // ---- what channels use ----

  RdmaShuffleConf conf() {
    return conf;
  }

  TransportStats stats() {
    return stats;
  }

  ReceivePool pool() {
    return memory.pool();
  }

  CallbackDispatcher callbacks() {
    return callbacks;
  }

  /**
   * A quarter of the receive pool (a power of two, so the buddy allocator wastes nothing),
   * at most spark.shuffle.rdma.maxReadSize: several pieces of one large block are in flight
   * at once and other reads still find memory.
   */
  int maxReadLength() {
    return maxReadLength;
  }

  ConnectAuth auth() {
    return auth;
  }

  ReadDepth.Device device() {
    return device;
  }

  /** Runs a short task off the caller's locks (on the CM thread). */
  void runLater(Runnable task) {
    cm.submit(task);
  }

  // ---- connecting ----

  /**
   * The channel to {@code peer}: its one queue pair, or with several per peer a
   * {@link StripedChannel} over all of them, shared until one of its lanes broke (then a new
   * one reuses the lanes that still work and waits for the replacement of the broken one).
   */
  TransportChannel connect(PeerAddress peer) throws IOException {
    if (queuePairsPerPeer == 1) {
      return await(connectAsync(peer, 0), peer);
    }
    synchronized (lock) {
      StripedChannel s = stripes.get(peer);
      if (s != null && s.isActive()) {
        return s;
      }
    }
    List<CompletableFuture<VerbsChannel>> pending = new ArrayList<>(queuePairsPerPeer);
    for (int lane = 0; lane < queuePairsPerPeer; lane++) {
      pending.add(connectAsync(peer, lane));
    }
    VerbsChannel[] lanes = new VerbsChannel[queuePairsPerPeer];
    for (int lane = 0; lane < lanes.length; lane++) {
      lanes[lane] = await(pending.get(lane), peer);
    }
    synchronized (lock) {
      StripedChannel s = stripes.get(peer);
      if (s == null || !s.isActive() || !s.uses(lanes)) {
        s = new StripedChannel(peer, lanes);
        stripes.put(peer, s);
      }
      return s;
    }
  }

  private static VerbsChannel await(CompletableFuture<VerbsChannel> f, PeerAddress peer)
      throws IOException {
    try {
      return f.get();
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof IOException ? (IOException) c : new IOException(c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while connecting to " + peer, e);
    }
  }

  /**
   * The active channel on queue pair {@code lane} to {@code peer}, or the attempt to make one
   * (shared by concurrent callers). Never blocks, so a completion path can start a
   * replacement connection for the one lane that broke; the attempt fails after
   * spark.shuffle.rdma.connectTimeout.
   */
  CompletableFuture<VerbsChannel> connectAsync(PeerAddress peer, int lane) {
    QpKey key = new QpKey(peer, lane);
    synchronized (lock) {
      if (closed) {
        return CompletableFuture.failedFuture(new IOException("verbs transport is closed"));
      }
      VerbsChannel ch = channels.get(key);
      if (ch != null && ch.isActive()) {
        return CompletableFuture.completedFuture(ch);
      }
      CompletableFuture<VerbsChannel> pending = connecting.get(key);
      if (pending != null) {
        return pending;
      }
      CompletableFuture<VerbsChannel> raw = new CompletableFuture<>();
      CompletableFuture<VerbsChannel> result = new CompletableFuture<>();
      AtomicReference<VerbsChannel> started = new AtomicReference<>();
      connecting.put(key, result);
      long timeoutMs = conf.connectTimeoutMs();
      raw.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).whenComplete((c, err) -> {
        IOException failure = null;
        if (err != null) {
          Throwable e = err instanceof CompletionException && err.getCause() != null
              ? err.getCause() : err;
          failure = e instanceof TimeoutException
              ? new IOException("RDMA connect to " + peer + " timed out after " + timeoutMs
                  + " ms (spark.shuffle.rdma.connectTimeout)")
              : e instanceof IOException ? (IOException) e : new IOException(e);
          if (e instanceof TimeoutException) {
            IOException te = failure;
            cm.submit(() -> {
              VerbsChannel s = started.get();
              if (s != null) {
                s.fail(te);
              }
            });
          }
        }
        synchronized (lock) {
          connecting.remove(key, result);
          if (failure == null) {
            channels.put(key, c);
            stats.connectionsOpened.incrementAndGet();
          }
        }
        if (failure == null) {
          result.complete(c);
        } else {
          result.completeExceptionally(failure);
        }
      });
      cm.submit(() -> startConnect(peer, lane, raw, started));
      return result;
    }
  }

  /** CM thread: create the id, set its traffic class, bind it to our address, resolve. */
  private void startConnect(PeerAddress peer, int lane, CompletableFuture<VerbsChannel> done,
      AtomicReference<VerbsChannel> started) {
    if (closed) {
      done.completeExceptionally(new IOException("verbs transport is closed"));
      return;
    }
    RdmaCmId id;
    try {
      id = eventChannel.createId(RdmaCm.RDMA_PS_TCP);
    } catch (IOException e) {
      done.completeExceptionally(e);
      return;
    }
    // No more send-queue entries than READs the QP may have outstanding.
    VerbsChannel ch = new VerbsChannel(this, peer, lane, id,
        agents[Math.floorMod(nextAgent.getAndIncrement(), agents.length)], done,
        ReadDepth.window(conf.maxReadsInFlightPerPeer(), ReadDepth.offer(device)));
    started.set(ch);
    all.add(ch);
    cm.register(id, new OutboundConnection(this, ch));
    try {
      // Before the route is resolved: the route takes the ToS (and the priority it maps to).
      VerbsTransport.setTrafficClass(id, conf.verbsTrafficClass());
      // Binding the source address keeps the connection on the chosen RDMA device.
      id.bindAddr(new InetSocketAddress(InetAddress.getByName(bindIp), 0));
      id.resolveAddr(null, new InetSocketAddress(InetAddress.getByName(peer.host()),
          peer.port()), OutboundConnection.RESOLVE_TIMEOUT_MS);
    } catch (IOException e) {
      ch.fail(new IOException("RDMA connect to " + peer + " failed: " + e.getMessage(), e));
    }
  }

  /** CM thread, on ROUTE_RESOLVED: this channel's CQ and RC QP, sized to its depth. */
  void createQueuePair(VerbsChannel ch) throws IOException {
    IbvContext ctx = ch.id.getVerbs();
    if (((NatObject) ctx).getObjId() != contextHandle) {
      throw new IOException("peer " + ch.peer() + " is reachable only through another RDMA "
          + "device than the one bound to " + bindIp + "; check routes or "
          + "spark.shuffle.rdma.device / bindAddress");
    }
    IOException last = null;
    for (int depth = ch.depth(); depth >= MIN_DEPTH || depth == ch.depth(); depth /= 2) {
      IbvCQ cq = ctx.createCQ(ch.agent.compChannel(), depth + 1, 0);
      try {
        ch.cq = cq;
        ch.qp = ch.id.createQP(memory.pd(), RcQueuePairs.attr(cq, depth, 1));
        ch.setDepth(depth);
        return;
      } catch (IOException e) {
        last = e;
        ch.cq = null;
        VerbsTransport.quietly(cq::destroyCQ);
      }
      if (depth <= MIN_DEPTH) {
        break;
      }
    }
    throw new IOException("creating an RC queue pair to " + ch.peer() + " failed: "
        + (last != null ? last.getMessage() : "?") + " (lower spark.shuffle.rdma."
        + "maxReadsInFlightPerPeer)", last);
  }

  // ---- tearing down ----

  /** Moves the channel's QP to error (its posted reads come back flushed). */
  void disconnect(VerbsChannel ch) {
    cm.submit(() -> VerbsTransport.quietly(ch.id::disconnect));
  }

  /** Frees a channel's QP, CQ and id on the CM thread, then fails what never completed. */
  void destroy(VerbsChannel ch) {
    if (!ch.markDestroying()) {
      return;
    }
    cm.submit(() -> destroyNow(ch));
  }

  private void destroyNow(VerbsChannel ch) {
    if (ch.qp != null) {
      VerbsTransport.quietly(ch.id::destroyQP);
    }
    if (ch.cq != null) {
      VerbsTransport.quietly(ch.cq::destroyCQ);
    }
    VerbsTransport.quietly(ch.id::destroyId);
    cm.unregister(ch.id);
    all.remove(ch);
    synchronized (lock) {
      channels.remove(new QpKey(ch.peer(), ch.lane), ch);
    }
    ch.failRemaining();
  }

  /** Refuses new connections and fails every channel (their posted reads flush). */
  void close() {
    synchronized (lock) {
      closed = true;
    }
    IOException cause = new IOException("verbs transport closed");
    for (VerbsChannel ch : all) {
      ch.fail(cause);
    }
  }

  /**
   * After the CM thread stopped: frees every channel whose completion agent stopped too
   * ({@code agentStopped}); a CQ is never destroyed under an agent that may still poll it.
   */
  void destroyAll(Predicate<CompletionAgent> agentStopped) {
    for (VerbsChannel ch : all) {
      if (agentStopped.test(ch.agent)) {
        ch.markDestroying();
        VerbsTransport.quietly(ch.id::disconnect);
        destroyNow(ch);
      }
    }
  }

  /** One queue pair to one peer: the key of a channel. */
  private static final class QpKey {
    final PeerAddress peer;
    final int lane;

    QpKey(PeerAddress peer, int lane) {
      this.peer = peer;
      this.lane = lane;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof QpKey && ((QpKey) o).peer.equals(peer) && ((QpKey) o).lane == lane;
    }

    @Override
    public int hashCode() {
      return peer.hashCode() * 31 + lane;
    }
  }
}
