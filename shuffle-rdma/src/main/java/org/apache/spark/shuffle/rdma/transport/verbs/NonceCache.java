/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nonces of authenticated connection requests still inside the freshness window, kept
 * per peer (the connecting side's address group), so a captured request replayed within
 * the window is refused. Only requests whose MAC verified are recorded, so a peer without
 * the secret cannot fill it.
 *
 * <p>Bounds: each peer keeps at most {@code perPeer} live nonces, all peers together at most
 * {@code capacity}. A peer over its share is refused (FULL) until its own entries expire; it
 * never takes room from other peers, so one peer flooding valid requests cannot make the
 * server refuse the rest. Entries are dropped once their request's time is more than the
 * window before now (such a request fails the time check anyway); a live entry is never
 * dropped, since its request could then be replayed.
 */
public final class NonceCache {
  private final long windowMs;
  private final int perPeer;
  private final int capacity;
  /** Peer to its nonces (nonce to request time, in insertion order); no empty entries. */
  private final Map<String, LinkedHashMap<ByteBuffer, Long>> peers = new HashMap<>();
  private int size;
  private long lastSweepMs = Long.MIN_VALUE;

  public NonceCache(long windowMs, int perPeer, int capacity) {
    if (windowMs <= 0 || perPeer < 1 || capacity < perPeer) {
      throw new IllegalArgumentException("window, share and capacity must be positive, the "
          + "capacity at least one share");
    }
    this.windowMs = windowMs;
    this.perPeer = perPeer;
    this.capacity = capacity;
  }

  public enum Outcome {
    FRESH,
    REPLAYED,
    /** This peer already has its share of live nonces. */
    PEER_FULL,
    /** All peers together hold the capacity in live nonces. */
    FULL
  }

  /**
   * Records {@code nonce} (copied) of a request from {@code peer} with its request's time.
   * REPLAYED when this peer sent it within the window; PEER_FULL or FULL when no room is left.
   */
  public synchronized Outcome record(String peer, byte[] nonce, long timestampMs, long nowMs) {
    // A whole sweep costs the entries it visits: at most once per eighth of the window, or
    // when full (so room freed by time is found before anyone is refused).
    if (size >= capacity || nowMs - lastSweepMs >= windowMs / 8 || nowMs < lastSweepMs) {
      sweep(nowMs);
    }
    LinkedHashMap<ByteBuffer, Long> mine = peers.get(peer);
    ByteBuffer key = ByteBuffer.wrap(nonce.clone());
    if (mine != null) {
      purge(mine, nowMs, mine.size() >= perPeer);
      if (mine.containsKey(key)) {
        return Outcome.REPLAYED;
      }
      if (mine.size() >= perPeer) {
        return Outcome.PEER_FULL;
      }
    }
    if (size >= capacity) {
      return Outcome.FULL;
    }
    if (mine == null) {
      mine = new LinkedHashMap<>();
      peers.put(peer, mine);
    }
    mine.put(key, timestampMs);
    size++;
    return Outcome.FRESH;
  }

  /** Drops every expired entry and the peers left without any. */
  private void sweep(long nowMs) {
    lastSweepMs = nowMs;
    Iterator<LinkedHashMap<ByteBuffer, Long>> it = peers.values().iterator();
    while (it.hasNext()) {
      LinkedHashMap<ByteBuffer, Long> m = it.next();
      purge(m, nowMs, true);
      if (m.isEmpty()) {
        it.remove();
      }
    }
  }

  /**
   * Drops {@code m}'s entries older than the window. Insertion order is roughly time order
   * (request times differ from the server's clock by at most the skew), so unless
   * {@code all}, it stops at the first live entry.
   */
  private void purge(LinkedHashMap<ByteBuffer, Long> m, long nowMs, boolean all) {
    Iterator<Long> it = m.values().iterator();
    while (it.hasNext()) {
      if (it.next() < nowMs - windowMs) {
        it.remove();
        size--;
      } else if (!all) {
        return;
      }
    }
  }

  public synchronized int size() {
    return size;
  }

  /** Live nonces of {@code peer} (for tests). */
  public synchronized int size(String peer) {
    LinkedHashMap<ByteBuffer, Long> m = peers.get(peer);
    return m == null ? 0 : m.size();
  }
}
