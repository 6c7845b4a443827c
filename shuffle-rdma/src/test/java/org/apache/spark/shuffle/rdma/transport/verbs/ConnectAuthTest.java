/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * The verbs connection authentication messages (ConnectAuth): what a server accepts and
 * what it refuses, and the client's check of the server's proof. The same code runs in the
 * Soft-RoCE VM self-test over real RDMA-CM private data.
 */
class ConnectAuthTest {
  private static final String SECRET = "app-secret-1";
  private static final String APP = "app-20261203-0001";
  private static final int CLIENT_QPN = 0x11;
  private static final int SERVER_QPN = 0x22;

  private final AtomicLong clock = new AtomicLong(1_780_000_000_000L);
  private final byte[] server = endpoint("10.0.0.2", 47470);

  private static byte[] endpoint(String ip, int port) {
    try {
      return ConnectAuth.endpoint(new InetSocketAddress(InetAddress.getByName(ip), port));
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  private ConnectAuth side(String secret, String app) {
    return new ConnectAuth(secret, app, clock::get);
  }

  @Test
  void theRightSecretConnectsBothWays() {
    ConnectAuth client = side(SECRET, APP);
    ConnectAuth serverSide = side(SECRET, APP);
    byte[] req = client.request(server, CLIENT_QPN);
    assertTrue(req.length <= 56, "fits a RoCE/IB connect request: " + req.length);
    assertNull(serverSide.checkRequest(padded(req, 56), 56, server, CLIENT_QPN));
    byte[] reply = serverSide.reply(req, server, CLIENT_QPN, SERVER_QPN);
    assertTrue(reply.length <= 196, "fits an accept reply");
    assertTrue(client.checkReply(req, padded(reply, 196), 196, server, CLIENT_QPN, SERVER_QPN));
  }

  @Test
  void requestsAreFreshEachTime() {
    ConnectAuth client = side(SECRET, APP);
    assertFalse(Arrays.equals(client.request(server, CLIENT_QPN),
        client.request(server, CLIENT_QPN)));
  }

  @Test
  void wrongSecretIsRefused() {
    byte[] req = side("another-secret", APP).request(server, CLIENT_QPN);
    assertRefused(side(SECRET, APP).checkRequest(req, req.length, server, CLIENT_QPN),
        "wrong MAC");
  }

  @Test
  void wrongApplicationIsRefused() {
    byte[] req = side(SECRET, "app-other").request(server, CLIENT_QPN);
    assertRefused(side(SECRET, APP).checkRequest(req, req.length, server, CLIENT_QPN),
        "wrong MAC");
  }

  @Test
  void requestForAnotherServerOrQueuePairIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    assertRefused(s.checkRequest(req, req.length, endpoint("10.0.0.3", 47470), CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, endpoint("10.0.0.2", 47471), CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, server, CLIENT_QPN + 1), "wrong MAC");
  }

  @Test
  void everyFlippedBitIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_QPN);
    for (int bit = 0; bit < req.length * 8; bit++) {
      byte[] bad = req.clone();
      bad[bit / 8] ^= (byte) (1 << (bit % 8));
      assertNotNull(side(SECRET, APP).checkRequest(bad, bad.length, server, CLIENT_QPN),
          "bit " + bit + " flipped was accepted");
    }
  }

  @Test
  void staleAndFutureRequestsAreRefused() {
    ConnectAuth client = side(SECRET, APP);
    ConnectAuth s = side(SECRET, APP);
    byte[] old = client.request(server, CLIENT_QPN);
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS + 1);
    assertRefused(s.checkRequest(old, old.length, server, CLIENT_QPN), "stale");
    byte[] future = client.request(server, CLIENT_QPN);
    clock.addAndGet(-2 * (ConnectAuth.MAX_SKEW_MS + 1));
    assertRefused(s.checkRequest(future, future.length, server, CLIENT_QPN), "stale");
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS + 1);
    byte[] edge = client.request(server, CLIENT_QPN);
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS);
    assertNull(s.checkRequest(edge, edge.length, server, CLIENT_QPN), "inside the window");
  }

  @Test
  void aReplayedRequestIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    assertNull(s.checkRequest(req, req.length, server, CLIENT_QPN));
    clock.addAndGet(1000);
    assertRefused(s.checkRequest(req, req.length, server, CLIENT_QPN), "replayed");
  }

  @Test
  void truncatedOrMissingDataIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    for (int len = 0; len < req.length; len++) {
      assertRefused(s.checkRequest(Arrays.copyOf(req, len), len, server, CLIENT_QPN),
          "truncated");
    }
    assertRefused(s.checkRequest(req, req.length - 1, server, CLIENT_QPN), "truncated");
    assertRefused(s.checkRequest(null, 0, server, CLIENT_QPN), "truncated");
    // What an unauthenticated peer's request reads as: 56 zero bytes.
    assertRefused(s.checkRequest(new byte[56], 56, server, CLIENT_QPN), "version");
  }

  @Test
  void theClientRefusesAServerWithoutTheSecret() {
    ConnectAuth client = side(SECRET, APP);
    byte[] req = client.request(server, CLIENT_QPN);
    byte[] forged = side("guess", APP).reply(req, server, CLIENT_QPN, SERVER_QPN);
    assertFalse(client.checkReply(req, forged, forged.length, server, CLIENT_QPN, SERVER_QPN));
    byte[] good = side(SECRET, APP).reply(req, server, CLIENT_QPN, SERVER_QPN);
    assertFalse(client.checkReply(req, good, good.length - 1, server, CLIENT_QPN, SERVER_QPN),
        "truncated reply");
    assertFalse(client.checkReply(req, new byte[196], 196, server, CLIENT_QPN, SERVER_QPN),
        "a server that sent no proof (no spark.authenticate)");
    assertFalse(client.checkReply(req, good, good.length, server, CLIENT_QPN, SERVER_QPN + 1),
        "proof for another queue pair");
    byte[] otherReq = client.request(server, CLIENT_QPN);
    assertFalse(client.checkReply(otherReq, good, good.length, server, CLIENT_QPN, SERVER_QPN),
        "proof answering another request (replayed reply)");
    assertTrue(client.checkReply(req, good, good.length, server, CLIENT_QPN, SERVER_QPN));
  }

  @Test
  void aMissingSecretFailsAtStartup() {
    assertThrows(IllegalArgumentException.class, () -> side(null, APP));
    assertThrows(IllegalArgumentException.class, () -> side("", APP));
  }

  @Test
  void theNonceCacheForgetsOnlyExpiredNoncesAndFailsClosedWhenFull() {
    NonceCache cache = new NonceCache(1000, 2);
    byte[] a = {1};
    byte[] b = {2};
    byte[] c = {3};
    assertEquals(NonceCache.Outcome.FRESH, cache.record(a, 0, 0));
    assertEquals(NonceCache.Outcome.REPLAYED, cache.record(a, 0, 500));
    assertEquals(NonceCache.Outcome.FRESH, cache.record(b, 400, 500));
    assertEquals(NonceCache.Outcome.FULL, cache.record(c, 500, 900), "no live nonce dropped");
    assertEquals(NonceCache.Outcome.FRESH, cache.record(c, 1001, 1001), "a expired");
    assertEquals(2, cache.size());
    assertNotEquals(NonceCache.Outcome.FRESH, cache.record(b, 400, 1300));
  }

  private static byte[] padded(byte[] b, int len) {
    return Arrays.copyOf(b, len);
  }

  private static void assertRefused(String reason, String expected) {
    assertNotNull(reason, "accepted, expected refusal: " + expected);
    assertTrue(reason.contains(expected), "refused for '" + reason + "', expected '"
        + expected + "'");
  }
}
