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
import java.net.UnknownHostException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.apache.spark.shuffle.rdma.transport.RareLog;

/**
 * What decides whether a verbs CONNECT_REQUEST gets a queue pair (ConnectGate): the inbound
 * limits in all and per peer address refuse the excess and still admit others, and a
 * request that fails authentication never holds a slot.
 */
class ConnectGateTest {
  private static final String SECRET = "app-secret-1";
  private static final String APP = "app-20261203-0001";
  private static final int QPN = 0x11;

  private final AtomicLong clock = new AtomicLong(1_780_000_000_000L);
  private final byte[] server = ConnectAuth.endpoint(new InetSocketAddress(ip("10.0.0.2"),
      47470));

  private static InetAddress ip(String ip) {
    try {
      return InetAddress.getByName(ip);
    } catch (UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  /** Without spark.authenticate: only the limits. */
  private static String admit(ConnectGate gate, InetAddress client) {
    return gate.admit(new byte[0], 0, null, client, QPN);
  }

  @Test
  void thePerAddressLimitRefusesTheExcessAndAdmitsOtherAddresses() {
    ConnectGate gate = new ConnectGate(null, new InboundQuota(100, 3));
    InetAddress a = ip("10.0.0.7");
    for (int i = 0; i < 3; i++) {
      assertNull(admit(gate, a));
    }
    for (int i = 0; i < 50; i++) {
      String why = admit(gate, a);
      assertNotNull(why, "attempt " + i + " over the per-address limit was admitted");
      assertTrue(why.contains("from 10.0.0.7") && why.contains("PerAddress=3"), why);
    }
    assertEquals(50, gate.refused());
    assertNull(admit(gate, ip("10.0.0.8")), "another address is admitted");
    assertEquals(3, gate.quota().of("10.0.0.7"));
    gate.release(a);
    assertNull(admit(gate, a), "a released slot is usable again");
  }

  @Test
  void anIpv6HostCountsAsItsSlash64() {
    ConnectGate gate = new ConnectGate(null, new InboundQuota(100, 2));
    assertNull(admit(gate, ip("fd00:1:2:3::1")));
    assertNull(admit(gate, ip("fd00:1:2:3::2")));
    assertNotNull(admit(gate, ip("fd00:1:2:3:ffff::9")), "same /64");
    assertNull(admit(gate, ip("fd00:1:2:4::1")), "another /64");
  }

  @Test
  void theTotalLimitRefusesTheExcessWhateverTheAddress() {
    ConnectGate gate = new ConnectGate(null, new InboundQuota(5, 2));
    int admitted = 0;
    for (int host = 1; host <= 20; host++) {
      for (int j = 0; j < 2; j++) {
        String why = admit(gate, ip("10.0.1." + host));
        if (why == null) {
          admitted++;
        } else {
          assertTrue(why.contains("maxInboundQueuePairs=5"), why);
        }
      }
    }
    assertEquals(5, admitted);
    assertEquals(5, gate.quota().total());
    assertEquals(35, gate.refused());
    gate.release(ip("10.0.1.1"));
    assertNull(admit(gate, ip("10.0.9.9")), "room again after a connection ended");
  }

  @Test
  void requestsThatFailAuthenticationHoldNoSlot() {
    ConnectAuth auth = new ConnectAuth(SECRET, APP, clock::get);
    ConnectGate gate = new ConnectGate(auth, new InboundQuota(4, 2));
    InetAddress intruder = ip("10.0.0.66");
    ConnectAuth wrong = new ConnectAuth("wrong-" + SECRET, APP, clock::get);
    for (int i = 0; i < 300; i++) {
      byte[] req = wrong.request(server, ConnectAuth.address(intruder), QPN);
      String why = gate.admit(req, req.length, server, intruder, QPN);
      assertNotNull(why);
      assertTrue(why.contains("wrong MAC"), why);
    }
    assertEquals(300, gate.refused(), "every refusal counted");
    assertEquals(0, gate.quota().total(), "no slot taken by a peer without the secret");
    InetAddress reader = ip("10.0.0.7");
    ConnectAuth right = new ConnectAuth(SECRET, APP, clock::get);
    for (int i = 0; i < 2; i++) {
      byte[] req = right.request(server, ConnectAuth.address(reader), QPN);
      assertNull(gate.admit(req, req.length, server, reader, QPN));
    }
    byte[] third = right.request(server, ConnectAuth.address(reader), QPN);
    String why = gate.admit(third, third.length, server, reader, QPN);
    assertNotNull(why, "a third queue pair from one address over a limit of 2");
    assertTrue(why.contains("from 10.0.0.7"), why);
  }

  @Test
  void refusalsAreLoggedAtPowersOfTwo() {
    int logged = 0;
    for (long n = 1; n <= 1000; n++) {
      logged += RareLog.due(n) ? 1 : 0;
    }
    assertEquals(10, logged, "1, 2, 4, ... 512");
    assertFalse(RareLog.due(0));
  }

  @Test
  void releasingWhatWasNotAdmittedIsABug() {
    InboundQuota q = new InboundQuota(2, 1);
    assertThrows(IllegalStateException.class, () -> q.release("10.0.0.7"));
    assertThrows(IllegalArgumentException.class, () -> new InboundQuota(0, 1));
  }
}
