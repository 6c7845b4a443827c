/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * The address the node service serves on and answers with when no {@code --host} is given,
 * picked as Spark picks its own ({@code Utils.findLocalInetAddress}, private in Spark, so not
 * callable from here): {@code SPARK_LOCAL_IP} when set; else the address this host's name
 * resolves to when it is not a loopback address; else (127.0.1.1 on stock Debian and Ubuntu)
 * the first network interface, in the reverse of the order the JDK lists them as Spark takes
 * them, that is up and has an address neither loopback nor link-local: its first IPv4 address,
 * else its first IPv6 one; else the loopback address. One log line says which and why.
 */
final class LocalAddress {
  /** A network interface as this choice sees it (tests build their own). */
  static final class Nic {
    final String name;
    final boolean up;
    final List<InetAddress> addresses;

    Nic(String name, boolean up, List<InetAddress> addresses) {
      this.name = name;
      this.up = up;
      this.addresses = addresses;
    }
  }

  private LocalAddress() {
  }

  /** This host's address, logged through {@code log}. */
  static String find(Consumer<String> log) throws UnknownHostException, SocketException {
    String override = System.getenv("SPARK_LOCAL_IP");
    InetAddress localHost = InetAddress.getLocalHost();
    List<Nic> nics = new ArrayList<>();
    if (override == null && localHost.isLoopbackAddress()) {
      for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        nics.add(new Nic(ni.getName(), ni.isUp(), Collections.list(ni.getInetAddresses())));
      }
    }
    return choose(override, localHost, nics, log);
  }

  /**
   * @param override SPARK_LOCAL_IP, or null
   * @param localHost what this host's name resolves to
   * @param nics the interfaces in the JDK's order
   */
  static String choose(String override, InetAddress localHost, List<Nic> nics,
      Consumer<String> log) throws UnknownHostException {
    if (override != null && !override.isEmpty()) {
      String a = InetAddress.getByName(override).getHostAddress();
      log.accept("address " + a + ": SPARK_LOCAL_IP");
      return a;
    }
    String host = localHost.getHostName() + " (" + localHost.getHostAddress() + ")";
    if (!localHost.isLoopbackAddress()) {
      log.accept("address " + localHost.getHostAddress() + ": this host's name, " + host);
      return localHost.getHostAddress();
    }
    List<Nic> reversed = new ArrayList<>(nics);
    Collections.reverse(reversed);
    for (Nic nic : reversed) {
      if (!nic.up) {
        continue;
      }
      InetAddress first = null;
      for (InetAddress a : nic.addresses) {
        if (a.isLoopbackAddress() || a.isLinkLocalAddress()) {
          continue;
        }
        if (a instanceof Inet4Address) {
          first = a;
          break;
        }
        if (first == null) {
          first = a;
        }
      }
      if (first != null) {
        // Without the interface name an IPv6 address may carry (%eth0), as Spark strips it.
        String a = InetAddress.getByAddress(first.getAddress()).getHostAddress();
        log.accept("address " + a + " of interface " + nic.name + ": this host's name, "
            + host + ", is a loopback address (as Spark does; --host or SPARK_LOCAL_IP "
            + "choose another)");
        return a;
      }
    }
    log.accept("address " + localHost.getHostAddress() + ": this host's name, " + host
        + ", is a loopback address and no interface has another: readers on other hosts "
        + "cannot reach it (set --host or SPARK_LOCAL_IP)");
    return localHost.getHostAddress();
  }
}
