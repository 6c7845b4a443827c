/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.shuffle.rdma.transport.PeerGroup;

/**
 * How many inbound queue pairs the verbs server holds, in all and per peer group
 * ({@link PeerGroup}). Each accepted connection holds a QP, a CQ and their NIC context until
 * the peer disconnects; without a bound, peers (anyone on the fabric without
 * spark.authenticate, any holder of the secret with it) could exhaust the device's QPs or
 * the kernel memory behind them, and one host could take all the room. A connect request is
 * admitted here before any QP or CQ is created for it; the slot is released when the
 * connection is torn down, or when creating it failed.
 */
public final class InboundQuota {
  private final int maxTotal;
  private final int maxPerPeer;
  /** Peer group to its live QPs; entries exist only while > 0. */
  private final Map<String, Integer> perPeer = new HashMap<>();
  private int total;

  public InboundQuota(int maxTotal, int maxPerPeer) {
    if (maxTotal < 1 || maxPerPeer < 1) {
      throw new IllegalArgumentException("inbound queue pair limits must be positive");
    }
    this.maxTotal = maxTotal;
    this.maxPerPeer = maxPerPeer;
  }

  /**
   * Takes a slot for a connection from {@code peer}: null when admitted (then
   * {@link #release} it exactly once), otherwise why not (nothing taken).
   */
  public synchronized String admit(String peer) {
    if (total >= maxTotal) {
      return "too many inbound queue pairs (" + total + ", "
          + "spark.shuffle.rdma.verbs.maxInboundQueuePairs=" + maxTotal + ")";
    }
    int mine = perPeer.getOrDefault(peer, 0);
    if (mine >= maxPerPeer) {
      return "too many inbound queue pairs from " + peer + " (" + mine + ", "
          + "spark.shuffle.rdma.verbs.maxInboundQueuePairsPerAddress=" + maxPerPeer + ")";
    }
    perPeer.put(peer, mine + 1);
    total++;
    return null;
  }

  /** Gives back the slot an admitted connection from {@code peer} held. */
  public synchronized void release(String peer) {
    Integer mine = perPeer.get(peer);
    if (mine == null) {
      throw new IllegalStateException("no inbound queue pair of " + peer + " to release");
    }
    if (mine == 1) {
      perPeer.remove(peer);
    } else {
      perPeer.put(peer, mine - 1);
    }
    total--;
  }

  public synchronized int total() {
    return total;
  }

  public synchronized int of(String peer) {
    return perPeer.getOrDefault(peer, 0);
  }
}
