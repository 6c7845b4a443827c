/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Enumeration;
import java.util.Optional;

/** The IPv4 address of a network interface; an interface so tests can fake the network. */
@FunctionalInterface
public interface NetdevAddresses {

  Optional<String> ipv4(String netdev);

  /** The host's interfaces, through java.net.NetworkInterface. */
  static NetdevAddresses host() {
    return netdev -> {
      try {
        NetworkInterface nif = NetworkInterface.getByName(netdev);
        if (nif == null) {
          return Optional.empty();
        }
        Enumeration<InetAddress> addrs = nif.getInetAddresses();
        while (addrs.hasMoreElements()) {
          InetAddress a = addrs.nextElement();
          if (a instanceof Inet4Address) {
            return Optional.of(a.getHostAddress());
          }
        }
        return Optional.empty();
      } catch (SocketException e) {
        return Optional.empty();
      }
    };
  }
}
