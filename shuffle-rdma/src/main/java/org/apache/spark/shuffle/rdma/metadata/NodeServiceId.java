/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * The name a node service goes by in descriptors and in the driver's directory:
 * {@code node-service@host:port}, its transport address. Derived from the address on both
 * sides (the executor that publishes, the driver that lists it), so a name can only ever
 * point at the address it spells: nobody can register a service name for another address.
 * Executor ids Spark hands out are numbers or "driver", never of this form.
 */
public final class NodeServiceId {
  static final String PREFIX = "node-service@";

  private NodeServiceId() {}

  /** The id of the node service readers reach at {@code address}. */
  public static String of(PeerAddress address) {
    return PREFIX + address.host() + ":" + address.port();
  }

  /** Whether {@code id} names a node service rather than an executor. */
  public static boolean isService(String id) {
    return id.startsWith(PREFIX);
  }
}
