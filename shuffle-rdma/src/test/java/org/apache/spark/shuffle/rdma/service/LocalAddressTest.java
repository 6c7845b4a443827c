/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The service's address without --host, picked as Spark's Utils.findLocalInetAddress picks
 * its own: SPARK_LOCAL_IP, else a host name that does not resolve to loopback, else the
 * interfaces in reverse order (up ones, no loopback or link-local address, IPv4 first within
 * an interface), each choice logged in one line.
 */
class LocalAddressTest {
  private final List<String> log = new ArrayList<>();

  private static InetAddress ip(String a) throws Exception {
    return InetAddress.getByName(a);
  }

  private static InetAddress debian() throws Exception {
    // What stock Debian and Ubuntu resolve their host name to (/etc/hosts).
    return InetAddress.getByAddress("node1", ip("127.0.1.1").getAddress());
  }

  private static LocalAddress.Nic nic(String name, boolean up, String... addresses)
      throws Exception {
    List<InetAddress> as = new ArrayList<>();
    for (String a : addresses) {
      as.add(ip(a));
    }
    return new LocalAddress.Nic(name, up, as);
  }

  private String choose(String override, InetAddress localHost, LocalAddress.Nic... nics)
      throws Exception {
    return LocalAddress.choose(override, localHost, List.of(nics), log::add);
  }

  @Test
  void sparkLocalIpWins() throws Exception {
    assertEquals("10.9.8.7", choose("10.9.8.7", debian(), nic("eth0", true, "192.168.1.5")));
    assertEquals(List.of("address 10.9.8.7: SPARK_LOCAL_IP"), log);
  }

  @Test
  void aHostNameThatIsNotLoopbackIsTaken() throws Exception {
    InetAddress named = InetAddress.getByAddress("node1", ip("10.0.0.5").getAddress());
    assertEquals("10.0.0.5", choose(null, named, nic("eth1", true, "10.0.0.7")));
    assertTrue(log.get(0).contains("this host's name"), log.toString());
  }

  @Test
  void onLoopbackTheLastUpInterfaceWithAnAddressIsTaken() throws Exception {
    // The JDK's order; Spark takes it reversed (ifconfig's order): docker0 is down, eth1
    // comes before eth0.
    assertEquals("10.0.0.7", choose(null, debian(), nic("lo", true, "127.0.0.1", "::1"),
        nic("eth0", true, "192.168.1.5"), nic("eth1", true, "10.0.0.7"),
        nic("docker0", false, "172.17.0.1")));
    assertEquals(1, log.size(), log.toString());
    assertTrue(log.get(0).startsWith("address 10.0.0.7 of interface eth1: this host's name, "
        + "node1 (127.0.1.1), is a loopback address"), log.get(0));
  }

  @Test
  void ipv4FirstWithinAnInterfaceNeverLinkLocal() throws Exception {
    assertEquals("192.168.1.5", choose(null, debian(), nic("lo", true, "127.0.0.1"),
        nic("eth0", true, "fe80::1", "2001:db8::5", "192.168.1.5"),
        nic("ib0", true, "fe80::2", "169.254.3.4")));
    log.clear();
    assertEquals("2001:db8:0:0:0:0:0:5", choose(null, debian(), nic("lo", true, "127.0.0.1"),
        nic("eth0", true, "fe80::1", "2001:db8::5")));
  }

  @Test
  void noOtherAddressKeepsLoopbackAndSaysSo() throws Exception {
    assertEquals("127.0.1.1", choose(null, debian(), nic("lo", true, "127.0.0.1", "::1"),
        nic("eth0", false, "192.168.1.5")));
    assertTrue(log.get(0).contains("readers on other hosts cannot reach it"), log.toString());
  }
}
