/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nonces of authenticated connection requests still inside the freshness window, so a
 * captured request replayed within the window is refused. Only requests whose MAC verified
 * are recorded, so a peer without the secret cannot fill it. An entry is dropped once its
 * timestamp left the window (its request fails the time check anyway). When the cache is
 * full of live entries, new requests are refused (fail closed) rather than forgetting a
 * nonce that could then be replayed.
 */
public final class NonceCache {
  private final long windowMs;
  private final int capacity;
  /** Nonce to its request's timestamp, in insertion order. */
  private final LinkedHashMap<ByteBuffer, Long> seen = new LinkedHashMap<>();

  public NonceCache(long windowMs, int capacity) {
    if (windowMs <= 0 || capacity < 1) {
      throw new IllegalArgumentException("window and capacity must be positive");
    }
    this.windowMs = windowMs;
    this.capacity = capacity;
  }

  public enum Outcome { FRESH, REPLAYED, FULL }

  /**
   * Records {@code nonce} (copied) with its request's timestamp; REPLAYED when it was seen
   * within the window, FULL when no room is left.
   */
  public synchronized Outcome record(byte[] nonce, long timestampMs, long nowMs) {
    purge(nowMs);
    ByteBuffer key = ByteBuffer.wrap(nonce.clone());
    if (seen.containsKey(key)) {
      return Outcome.REPLAYED;
    }
    if (seen.size() >= capacity) {
      return Outcome.FULL;
    }
    seen.put(key, timestampMs);
    return Outcome.FRESH;
  }

  /** Drops entries whose timestamp is older than the window. */
  private void purge(long nowMs) {
    Iterator<Map.Entry<ByteBuffer, Long>> it = seen.entrySet().iterator();
    while (it.hasNext()) {
      if (it.next().getValue() < nowMs - windowMs) {
        it.remove();
      } else if (seen.size() < capacity) {
        return; // insertion order is roughly time order: stop at the first live entry
      }
    }
  }

  public synchronized int size() {
    return seen.size();
  }
}
