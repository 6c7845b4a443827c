/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.Serializable;
import java.util.Objects;

/** Where a transport's serving half listens: host (an IP literal) and port. */
public final class PeerAddress implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String host;
  private final int port;

  public PeerAddress(String host, int port) {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("peer host must not be empty");
    }
    if (port <= 0 || port > 65535) {
      throw new IllegalArgumentException("peer port out of range: " + port);
    }
    this.host = host;
    this.port = port;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PeerAddress
        && ((PeerAddress) o).port == port
        && ((PeerAddress) o).host.equals(host);
  }

  @Override
  public int hashCode() {
    return Objects.hash(host, port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
