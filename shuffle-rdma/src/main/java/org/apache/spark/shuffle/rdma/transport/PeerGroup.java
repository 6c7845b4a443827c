/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * The unit both servers (tcp and verbs) count connecting peers by: an IPv4 address, or an IPv6 /64
 * (one host owns a whole /64, so per-address counts would let it spread over 2^64 keys).
 * The address is the one RDMA-CM reports for the peer of a CONNECT_REQUEST (its cm id's
 * destination); on tcp, the remote socket address.
 */
public final class PeerGroup {
  private PeerGroup() {}

  public static String of(InetAddress a) {
    if (a == null) {
      return "?";
    }
    if (a instanceof Inet6Address) {
      byte[] b = a.getAddress();
      StringBuilder s = new StringBuilder("v6:");
      for (int i = 0; i < 8; i++) {
        s.append(String.format("%02x", b[i]));
      }
      return s.append("/64").toString();
    }
    return a.getHostAddress();
  }
}
