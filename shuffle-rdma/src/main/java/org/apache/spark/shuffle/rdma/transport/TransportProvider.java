/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.IOException;

/**
 * Creates one kind of transport. Implementations are listed in
 * META-INF/services/org.apache.spark.shuffle.rdma.transport.TransportProvider, where
 * {@code org.apache.spark.shuffle.rdma.TransportFactory} finds them.
 */
public interface TransportProvider {

  /** "tcp" or "verbs". */
  String name();

  /**
   * Null when this transport can start here; otherwise why not and how to fix it, in one
   * sentence (used for the auto fallback line and for the startup error of a forced choice).
   */
  String unavailableReason(TransportSettings settings);

  ShuffleTransport create(TransportSettings settings) throws IOException;
}
