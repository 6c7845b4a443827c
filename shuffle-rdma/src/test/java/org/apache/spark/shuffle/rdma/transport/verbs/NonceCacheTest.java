/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.spark.shuffle.rdma.transport.verbs.NonceCache.Outcome;
import org.junit.jupiter.api.Test;

/**
 * The replay cache of verbs connection nonces: bounded per peer and in all, expiring by
 * time, never forgetting a live nonce.
 */
class NonceCacheTest {
  private static final String A = "10.0.0.7";
  private static final String B = "10.0.0.8";

  @Test
  void aReplayIsRefusedUntilItsTimeLeftTheWindow() {
    NonceCache cache = new NonceCache(1000, 4, 8);
    assertEquals(Outcome.FRESH, cache.record(A, new byte[] {1}, 0, 0));
    assertEquals(Outcome.REPLAYED, cache.record(A, new byte[] {1}, 0, 1000));
    assertEquals(Outcome.FRESH, cache.record(A, new byte[] {1}, 0, 1001), "expired");
  }

  @Test
  void onePeerOverItsShareIsRefusedOthersAreNot() {
    NonceCache cache = new NonceCache(1000, 3, 100);
    for (int i = 0; i < 3; i++) {
      assertEquals(Outcome.FRESH, cache.record(A, new byte[] {(byte) i}, 0, 0));
    }
    for (int i = 3; i < 500; i++) {
      assertEquals(Outcome.PEER_FULL, cache.record(A, new byte[] {(byte) i, 1}, 10, 10));
    }
    assertEquals(3, cache.size(A));
    assertEquals(Outcome.FRESH, cache.record(B, new byte[] {9}, 10, 10));
    assertEquals(Outcome.FRESH, cache.record(B, new byte[] {0}, 10, 10),
        "another peer's nonces are its own");
    assertEquals(5, cache.size());
  }

  @Test
  void expiredNoncesMakeRoomAndLiveOnesAreNeverDropped() {
    NonceCache cache = new NonceCache(1000, 2, 4);
    assertEquals(Outcome.FRESH, cache.record(A, new byte[] {1}, 0, 0));
    assertEquals(Outcome.FRESH, cache.record(A, new byte[] {2}, 500, 500));
    assertEquals(Outcome.PEER_FULL, cache.record(A, new byte[] {3}, 900, 900));
    assertEquals(Outcome.FRESH, cache.record(A, new byte[] {3}, 1001, 1001), "1 expired");
    assertEquals(Outcome.REPLAYED, cache.record(A, new byte[] {2}, 500, 1001), "2 is live");
    // Out of time order: an older timestamp behind a newer one still expires.
    NonceCache c2 = new NonceCache(1000, 2, 4);
    assertEquals(Outcome.FRESH, c2.record(A, new byte[] {1}, 800, 800));
    assertEquals(Outcome.FRESH, c2.record(A, new byte[] {2}, 100, 800));
    assertEquals(Outcome.FRESH, c2.record(A, new byte[] {3}, 1200, 1200), "2 expired");
    assertEquals(Outcome.REPLAYED, c2.record(A, new byte[] {1}, 800, 1200));
  }

  @Test
  void whenAllPeersFillItNoLiveNonceIsForgotten() {
    NonceCache cache = new NonceCache(1000, 2, 4);
    String[] peers = {"p1", "p2"};
    for (String p : peers) {
      assertEquals(Outcome.FRESH, cache.record(p, new byte[] {1}, 0, 0));
      assertEquals(Outcome.FRESH, cache.record(p, new byte[] {2}, 0, 0));
    }
    assertEquals(Outcome.FULL, cache.record("p3", new byte[] {1}, 0, 10));
    assertEquals(Outcome.REPLAYED, cache.record("p1", new byte[] {1}, 0, 10));
    assertEquals(Outcome.FRESH, cache.record("p3", new byte[] {1}, 1001, 1001),
        "room once the others expired");
    assertEquals(1, cache.size(), "expired peers are swept");
  }
}
