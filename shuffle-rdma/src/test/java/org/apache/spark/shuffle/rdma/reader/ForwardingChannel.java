/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/** A real channel with {@code read} left to the test: everything else goes to it. */
abstract class ForwardingChannel implements TransportChannel {
  final TransportChannel real;

  ForwardingChannel(TransportChannel real) {
    this.real = real;
  }

  @Override
  public PeerAddress peer() {
    return real.peer();
  }

  @Override
  public int maxReadLength() {
    return real.maxReadLength();
  }

  @Override
  public boolean isActive() {
    return real.isActive();
  }
}
