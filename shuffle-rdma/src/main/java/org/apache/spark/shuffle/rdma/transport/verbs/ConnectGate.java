/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.apache.spark.shuffle.rdma.transport.PeerGroup;

/**
 * Whether a CONNECT_REQUEST gets a queue pair, decided before anything is created for it:
 * with spark.authenticate its request must verify ({@link ConnectAuth}: MAC over the
 * client's address, time, nonce not replayed), then it must fit the inbound queue pair
 * limits ({@link InboundQuota}). Authentication comes first, so peers without the secret
 * never hold a slot. Refusals are counted and logged at the 1st, 2nd, 4th, 8th... with the
 * count: peers decide how often they happen, the log must stay small anyway.
 */
public final class ConnectGate {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectGate.class);

  /** Null without spark.authenticate. */
  private final ConnectAuth auth;
  private final InboundQuota quota;
  private final AtomicLong refused = new AtomicLong();

  public ConnectGate(ConnectAuth auth, InboundQuota quota) {
    this.auth = auth;
    this.quota = quota;
  }

  /**
   * Null when the request from {@code client} (as RDMA-CM reports the peer) may have a
   * queue pair; then {@link #release} it when that connection ends or fails to be made.
   * Otherwise the refusal, already counted and (rarely) logged.
   *
   * @param server this server's endpoint ({@link ConnectAuth#endpoint}); only with auth
   */
  public String admit(byte[] privateData, int length, byte[] server, InetAddress client,
      int clientQpn) {
    String refusal;
    if (client == null) {
      refusal = "RDMA-CM reports no address for the peer";
    } else if (auth != null) {
      refusal = auth.checkRequest(privateData, length, server, client, clientQpn);
    } else {
      refusal = null;
    }
    if (refusal == null) {
      refusal = quota.admit(PeerGroup.of(client));
    }
    if (refusal != null) {
      refuse(client == null ? "an unknown peer" : client.getHostAddress(), refusal);
    }
    return refusal;
  }

  /** Counts and (rarely) logs a request refused before or by {@link #admit}. */
  public void refuse(String peer, String refusal) {
    long n = refused.incrementAndGet();
    if (RareLog.due(n)) {
      LOG.warn("rejected RDMA connection request from {}: {}; {} rejected so far (logged at "
          + "the 1st, 2nd, 4th, 8th...)", peer, refusal, n);
    }
  }

  /** Gives back the slot of an admitted connection from {@code client}. */
  public void release(InetAddress client) {
    quota.release(PeerGroup.of(client));
  }

  /** Requests refused so far. */
  public long refused() {
    return refused.get();
  }

  public InboundQuota quota() {
    return quota;
  }
}
