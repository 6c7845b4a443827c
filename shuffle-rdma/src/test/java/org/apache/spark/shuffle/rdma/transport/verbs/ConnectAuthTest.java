/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
  private static final InetAddress CLIENT = ip("10.0.0.7");
  private static final byte[] CLIENT_IP = ConnectAuth.address(CLIENT);

  private static InetAddress ip(String ip) {
    try {
      return InetAddress.getByName(ip);
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

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
    byte[] req = client.request(server, CLIENT_IP, CLIENT_QPN);
    assertTrue(req.length <= 56, "fits a RoCE/IB connect request: " + req.length);
    assertNull(serverSide.checkRequest(padded(req, 56), 56, server, CLIENT, CLIENT_QPN));
    byte[] reply = serverSide.reply(req, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN);
    assertTrue(reply.length <= 196, "fits an accept reply");
    assertTrue(client.checkReply(req, padded(reply, 196), 196, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN));
  }

  @Test
  void requestsAreFreshEachTime() {
    ConnectAuth client = side(SECRET, APP);
    assertFalse(Arrays.equals(client.request(server, CLIENT_IP, CLIENT_QPN),
        client.request(server, CLIENT_IP, CLIENT_QPN)));
  }

  @Test
  void wrongSecretIsRefused() {
    byte[] req = side("another-secret", APP).request(server, CLIENT_IP, CLIENT_QPN);
    assertRefused(side(SECRET, APP).checkRequest(req, req.length, server, CLIENT, CLIENT_QPN),
        "wrong MAC");
  }

  @Test
  void wrongApplicationIsRefused() {
    byte[] req = side(SECRET, "app-other").request(server, CLIENT_IP, CLIENT_QPN);
    assertRefused(side(SECRET, APP).checkRequest(req, req.length, server, CLIENT, CLIENT_QPN),
        "wrong MAC");
  }

  @Test
  void requestForAnotherServerOrQueuePairIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    assertRefused(s.checkRequest(req, req.length, endpoint("10.0.0.3", 47470), CLIENT, CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, endpoint("10.0.0.2", 47471), CLIENT, CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN + 1), "wrong MAC");
  }

  @Test
  void everyFlippedBitIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    for (int bit = 0; bit < req.length * 8; bit++) {
      byte[] bad = req.clone();
      bad[bit / 8] ^= (byte) (1 << (bit % 8));
      assertNotNull(side(SECRET, APP).checkRequest(bad, bad.length, server, CLIENT, CLIENT_QPN),
          "bit " + bit + " flipped was accepted");
    }
  }

  @Test
  void staleAndFutureRequestsAreRefused() {
    ConnectAuth client = side(SECRET, APP);
    ConnectAuth s = side(SECRET, APP);
    byte[] old = client.request(server, CLIENT_IP, CLIENT_QPN);
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS + 1);
    assertRefused(s.checkRequest(old, old.length, server, CLIENT, CLIENT_QPN), "stale");
    byte[] future = client.request(server, CLIENT_IP, CLIENT_QPN);
    clock.addAndGet(-2 * (ConnectAuth.MAX_SKEW_MS + 1));
    assertRefused(s.checkRequest(future, future.length, server, CLIENT, CLIENT_QPN), "stale");
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS + 1);
    byte[] edge = client.request(server, CLIENT_IP, CLIENT_QPN);
    clock.addAndGet(ConnectAuth.MAX_SKEW_MS);
    assertNull(s.checkRequest(edge, edge.length, server, CLIENT, CLIENT_QPN), "inside the window");
  }

  @Test
  void aReplayedRequestIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    assertNull(s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN));
    clock.addAndGet(1000);
    assertRefused(s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN), "replayed");
  }

  @Test
  void truncatedOrMissingDataIsRefused() {
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    for (int len = 0; len < req.length; len++) {
      assertRefused(s.checkRequest(Arrays.copyOf(req, len), len, server, CLIENT, CLIENT_QPN),
          "truncated");
    }
    assertRefused(s.checkRequest(req, req.length - 1, server, CLIENT, CLIENT_QPN), "truncated");
    assertRefused(s.checkRequest(null, 0, server, CLIENT, CLIENT_QPN), "truncated");
    // What an unauthenticated peer's request reads as: 56 zero bytes.
    assertRefused(s.checkRequest(new byte[56], 56, server, CLIENT, CLIENT_QPN),
        "not an authentication request");
  }

  @Test
  void theClientRefusesAServerWithoutTheSecret() {
    ConnectAuth client = side(SECRET, APP);
    byte[] req = client.request(server, CLIENT_IP, CLIENT_QPN);
    byte[] forged = side("guess", APP).reply(req, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN);
    assertFalse(client.checkReply(req, forged, forged.length, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN));
    byte[] good = side(SECRET, APP).reply(req, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN);
    assertFalse(client.checkReply(req, good, good.length - 1, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN),
        "truncated reply");
    assertFalse(client.checkReply(req, new byte[196], 196, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN),
        "a server that sent no proof (no spark.authenticate)");
    assertFalse(client.checkReply(req, good, good.length, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN + 1),
        "proof for another queue pair");
    byte[] otherReq = client.request(server, CLIENT_IP, CLIENT_QPN);
    assertFalse(client.checkReply(otherReq, good, good.length, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN),
        "proof answering another request (replayed reply)");
    assertTrue(client.checkReply(req, good, good.length, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN));
  }

  @Test
  void aMissingSecretFailsAtStartup() {
    assertThrows(IllegalArgumentException.class, () -> side(null, APP));
    assertThrows(IllegalArgumentException.class, () -> side("", APP));
  }

  @Test
  void aRequestMadeForAnotherClientAddressIsRefused() {
    // Captured on the fabric and replayed from another host: the server sees that host's
    // address, which the MAC does not cover.
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    ConnectAuth s = side(SECRET, APP);
    assertRefused(s.checkRequest(req, req.length, server, ip("10.0.0.8"), CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, server, ip("::ffff:10.0.0.8"), CLIENT_QPN),
        "wrong MAC");
    assertRefused(s.checkRequest(req, req.length, server, ip("fe80::a00:7"), CLIENT_QPN),
        "wrong MAC");
    // From the address it was made for (a refused request leaves no nonce behind).
    assertNull(s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN));
    // An IPv4-mapped IPv6 form of the same address is that address.
    byte[] mapped = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    assertNull(s.checkRequest(mapped, mapped.length, server, ip("::ffff:10.0.0.7"),
        CLIENT_QPN));
  }

  @Test
  void theServerProofCoversTheClientAddress() {
    ConnectAuth client = side(SECRET, APP);
    byte[] req = client.request(server, CLIENT_IP, CLIENT_QPN);
    byte[] forOther = side(SECRET, APP).reply(req, server, ConnectAuth.address(ip("10.0.0.8")),
        CLIENT_QPN, SERVER_QPN);
    assertFalse(client.checkReply(req, forOther, forOther.length, server, CLIENT_IP,
        CLIENT_QPN, SERVER_QPN));
  }

  @Test
  void aRequestOrReplyOfTheOldVersionIsRefusedByName() {
    ConnectAuth s = side(SECRET, APP);
    byte[] req = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    req[3] = 1; // what the previous release sends
    String refusal = s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN);
    assertRefused(refusal, "version 1");
    assertRefused(refusal, "same shuffle-rdma release");
    byte[] good = side(SECRET, APP).request(server, CLIENT_IP, CLIENT_QPN);
    byte[] reply = s.reply(good, server, CLIENT_IP, CLIENT_QPN, SERVER_QPN);
    reply[3] = 1;
    assertRefused(side(SECRET, APP).replyRefusal(good, reply, reply.length, server, CLIENT_IP,
        CLIENT_QPN, SERVER_QPN), "version 1");
  }

  @Test
  void aFloodOfValidRequestsFromOnePeerDoesNotLockOutAnother() {
    ConnectAuth s = new ConnectAuth(SECRET, APP, clock::get, 4, 16);
    ConnectAuth flooder = side(SECRET, APP);
    int accepted = 0;
    String last = null;
    for (int i = 0; i < 1000; i++) {
      byte[] req = flooder.request(server, CLIENT_IP, CLIENT_QPN);
      last = s.checkRequest(req, req.length, server, CLIENT, CLIENT_QPN);
      accepted += last == null ? 1 : 0;
    }
    assertEquals(4, accepted, "the flooder gets its share of the replay cache, no more");
    assertRefused(last, "its share of the replay cache is full");
    InetAddress other = ip("10.0.0.8");
    for (int i = 0; i < 4; i++) {
      byte[] req = side(SECRET, APP).request(server, ConnectAuth.address(other), CLIENT_QPN);
      assertNull(s.checkRequest(req, req.length, server, other, CLIENT_QPN),
          "another peer is still admitted (" + i + ")");
    }
  }

  @Test
  void aPeerOverItsShareIsAdmittedAgainOnceItsNoncesExpire() {
    ConnectAuth s = new ConnectAuth(SECRET, APP, clock::get, 2, 16);
    ConnectAuth c = side(SECRET, APP);
    byte[] first = c.request(server, CLIENT_IP, CLIENT_QPN);
    assertNull(s.checkRequest(first, first.length, server, CLIENT, CLIENT_QPN));
    for (int i = 0; i < 2; i++) {
      clock.addAndGet(1000);
      byte[] r = c.request(server, CLIENT_IP, CLIENT_QPN);
      String why = s.checkRequest(r, r.length, server, CLIENT, CLIENT_QPN);
      if (i == 0) {
        assertNull(why);
      } else {
        assertRefused(why, "its share");
      }
    }
    // The first nonce leaves the replay window (2 x the skew after its time): room again.
    clock.set(clock.get() - 2000 + 2 * ConnectAuth.MAX_SKEW_MS + 1);
    byte[] later = c.request(server, CLIENT_IP, CLIENT_QPN);
    assertNull(s.checkRequest(later, later.length, server, CLIENT, CLIENT_QPN),
        "admitted once the first nonce expired");
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
