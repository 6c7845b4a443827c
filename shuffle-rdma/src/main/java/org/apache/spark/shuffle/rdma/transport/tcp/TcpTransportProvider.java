/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;

import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportProvider;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;

/** The tcp transport runs wherever the JVM has sockets. */
public final class TcpTransportProvider implements TransportProvider {
  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public String unavailableReason(TransportSettings settings) {
    return null;
  }

  @Override
  public ShuffleTransport create(TransportSettings settings) throws IOException {
    return new TcpTransport(settings);
  }
}
