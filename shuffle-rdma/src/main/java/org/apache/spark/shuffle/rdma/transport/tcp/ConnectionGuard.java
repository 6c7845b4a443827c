/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.Channel;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.TransportServerBootstrap;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.transport.PeerGroup;
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What any peer gets from the tcp server before (and regardless of) authentication. Spark's
 * network-common bounds none of it (it accepts any number of connections, waits forever for
 * a handshake, and buffers frames up to 2 GiB), so here:
 * <ul>
 *   <li>at most {@code maxTotal} open connections, and at most {@code maxPerAddress} not yet
 *   authenticated from one address group (an IPv4 address, an IPv6 /64: one host owns a
 *   whole /64). An authenticated connection leaves its group's count, so strangers flooding
 *   from a reader's address cannot push the reader's own connections out;</li>
 *   <li>with spark.authenticate, a connection that has not completed the handshake within
 *   {@code handshakeTimeoutMs} is closed, whether or not it sends bytes;</li>
 *   <li>every inbound frame is checked by an {@link InboundGuard} before network-common's
 *   decoder sees it.</li>
 * </ul>
 *
 * <p>Installed as the first server bootstrap: its handler goes in front of network-common's
 * frame decoder. Decryption handlers, added later with addFirst once a session is
 * authenticated, sit in front of it, so it always reads plaintext frames.
 */
final class ConnectionGuard implements TransportServerBootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

  private final int maxPerAddress;
  private final int maxTotal;
  private final long maxFrameSize;
  private final long handshakeTimeoutMs;
  private final boolean authenticate;
  private final boolean authEngine;
  /** Connections not yet authenticated, per address group; entries exist only while > 0. */
  private final ConcurrentHashMap<String, Integer> unauthenticated = new ConcurrentHashMap<>();
  private final AtomicInteger open = new AtomicInteger();
  final AtomicLong connectionsRefused = new AtomicLong();
  final AtomicLong framesRefused = new AtomicLong();
  final AtomicLong handshakesTimedOut = new AtomicLong();
  final AtomicLong handshakesFailed = new AtomicLong();

  /**
   * @param authenticate spark.authenticate: connections start unauthenticated
   * @param authEngine Spark's auth engine (spark.network.crypto.enabled), else SASL
   */
  ConnectionGuard(int maxPerAddress, int maxTotal, long maxFrameSize, long handshakeTimeoutMs,
      boolean authenticate, boolean authEngine) {
    this.maxPerAddress = maxPerAddress;
    this.maxTotal = maxTotal;
    this.maxFrameSize = maxFrameSize;
    this.handshakeTimeoutMs = handshakeTimeoutMs;
    this.authenticate = authenticate;
    this.authEngine = authEngine;
  }

  @Override
  public RpcHandler doBootstrap(Channel channel, RpcHandler rpcHandler) {
    String group = group(channel.remoteAddress());
    String refusal = admit(group);
    if (refusal != null) {
      long refused = connectionsRefused.incrementAndGet();
      if (RareLog.due(refused)) {
        LOG.warn("tcp transport: refused a connection from {}: {}; {} refused so far",
            channel.remoteAddress(), refusal, refused);
      }
      channel.close();
      return rpcHandler;
    }
    PeerState state = new PeerState(group, !authenticate);
    state.attach(channel);
    channel.closeFuture().addListener(f -> closed(state));
    channel.pipeline().addLast("rdmaInboundGuard",
        new InboundGuard(this, state, maxFrameSize, authEngine));
    if (authenticate) {
      channel.eventLoop().schedule(() -> {
        if (!state.authenticated && channel.isOpen()) {
          state.closedByGuard = true;
          long n = handshakesTimedOut.incrementAndGet();
          if (RareLog.due(n)) {
            LOG.warn("tcp transport: closed the connection from {}: no completed handshake "
                + "within {} ms ({}); {} so far", channel.remoteAddress(), handshakeTimeoutMs,
                RdmaConf.TCP_HANDSHAKE_TIMEOUT().key(), n);
          }
          channel.close();
        }
      }, handshakeTimeoutMs, TimeUnit.MILLISECONDS);
    }
    return rpcHandler;
  }

  /** Counts a new connection in; null when admitted, else why not. */
  private String admit(String group) {
    if (open.incrementAndGet() > maxTotal) {
      open.decrementAndGet();
      return maxTotal + " connections are open, the limit is " + maxTotal
          + " (" + RdmaConf.TCP_MAX_CONNECTIONS().key() + ")";
    }
    boolean[] admitted = new boolean[1];
    // One atomic step per group: a count can never be dropped while another connection
    // increments it (which would let connections escape the limit).
    unauthenticated.compute(group, (g, n) -> {
      int c = n == null ? 0 : n;
      if (c >= maxPerAddress) {
        return n;
      }
      admitted[0] = true;
      return c + 1;
    });
    if (!admitted[0]) {
      open.decrementAndGet();
      return maxPerAddress + " connections from that address are not authenticated, the "
          + "limit is " + maxPerAddress + " (" + RdmaConf.TCP_MAX_CONNECTIONS_PER_ADDRESS().key()
          + ")";
    }
    return null;
  }

  /** Spark's auth handler completed on {@code channel}: it leaves its group's count. */
  void authenticated(Channel channel) {
    PeerState state = PeerState.of(channel);
    if (state != null) {
      state.authenticated = true;
      leaveGroup(state);
    }
  }

  private void closed(PeerState state) {
    open.decrementAndGet();
    leaveGroup(state);
    if (authenticate && !state.authenticated && state.handshakeFrames > 0
        && !state.closedByGuard) {
      // Spark's auth handler saw a well-formed handshake and the connection ended without
      // authenticating: a wrong secret, a made-up proof, or a peer that gave up.
      long n = handshakesFailed.incrementAndGet();
      if (RareLog.due(n)) {
        LOG.warn("tcp transport: a connection from {} closed without completing "
            + "authentication; {} so far", state.group, n);
      }
    }
  }

  private void leaveGroup(PeerState state) {
    synchronized (state) {
      if (!state.countedInGroup) {
        return;
      }
      state.countedInGroup = false;
    }
    unauthenticated.compute(state.group, (g, n) -> n == null || n <= 1 ? null : n - 1);
  }

  /** A frame that broke the rules closed its connection (see InboundGuard). */
  void frameRefused(Channel channel, String why) {
    long n = framesRefused.incrementAndGet();
    if (RareLog.due(n)) {
      LOG.warn("tcp transport: closed the connection from {}: {}; {} refused so far",
          channel.remoteAddress(), why, n);
    }
  }

  /** The group a remote address counts against: the IPv4 address, or the IPv6 /64. */
  static String group(SocketAddress remote) {
    return PeerGroup.of(remote instanceof InetSocketAddress
        ? ((InetSocketAddress) remote).getAddress() : null);
  }

  /** Connections from {@code address}'s group not yet authenticated (for tests). */
  int openFrom(InetAddress address) {
    return unauthenticated.getOrDefault(group(new InetSocketAddress(address, 0)), 0);
  }

  /** All open connections (for tests). */
  int open() {
    return open.get();
  }
}
