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

  /** False once the connection broke; {@link ShuffleTransport#connect} then makes a new one. */
  boolean isActive();
}
