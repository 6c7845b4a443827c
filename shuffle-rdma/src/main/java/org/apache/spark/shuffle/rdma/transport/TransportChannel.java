/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.util.List;

/**
 * A connection to one peer, shared by all tasks of the executor. Reads are pipelined:
 * {@link #read} returns at once and each request completes through its callback, in any
 * order. The channel bounds the reads it keeps in flight; reads beyond the bound wait in
 * the channel, not in the caller.
 */
public interface TransportChannel {

  PeerAddress peer();

  /**
   * Posts {@code batch} as one batch (one doorbell on verbs, one flush on tcp). Never
   * throws for a transport failure: each request fails through its callback instead.
   */
  void read(List<ReadRequest> batch);

  /**
   * Longest single read this channel accepts. Callers split larger ranges into pieces of at
   * most this many bytes (verbs: a fraction of the receive pool, so several pieces can be in
   * flight at once; tcp: spark.shuffle.rdma.maxReadSize within its frame limit).
   */
  int maxReadLength();

  /** False once the connection broke; {@link ShuffleTransport#connect} then makes a new one. */
  boolean isActive();
}
