/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * What the tcp server knows about one inbound connection, attached to its Netty channel by
 * {@link ConnectionGuard}. {@link #authenticated} is the only proof of identity the server
 * trusts: set once Spark's auth handler itself completed ({@link AuthGate}), never from
 * anything the peer merely claimed (the client id SASL records from its first message).
 * The other fields are touched only on the channel's event loop.
 */
final class PeerState {
  private static final AttributeKey<PeerState> KEY = AttributeKey.valueOf("rdmaPeerState");

  /** The address group the connection counts against (see ConnectionGuard.group). */
  final String group;
  /** True once Spark's auth handler completed; from the start without spark.authenticate. */
  volatile boolean authenticated;
  /** Whether the connection still counts against its group's limit (guarded by this). */
  boolean countedInGroup = true;
  /** Handshake frames passed on to Spark's auth handler. */
  int handshakeFrames;
  /** Closed by the guard itself (a refused frame, the handshake deadline). */
  boolean closedByGuard;
  /** Reads refused on this connection (see RegionServer.MAX_REFUSALS). */
  int refusals;
  /** Reads served on this connection. */
  long served;
  /** Answer bytes handed to Netty and not yet written (see AnswerFlow). */
  long answerBytesQueued;
  /** Answer bytes written so far: progress, for the stall check. */
  long answerBytesWritten;
  /** Reading paused because too many answer bytes are queued. */
  boolean paused;

  PeerState(String group, boolean authenticated) {
    this.group = group;
    this.authenticated = authenticated;
  }

  void attach(Channel channel) {
    channel.attr(KEY).set(this);
  }

  /** The connection's state, or null if the guard refused it. */
  static PeerState of(Channel channel) {
    return channel.attr(KEY).get();
  }
}
