/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * Completion of a {@link ReadRequest}. Called once per request, on a transport thread (tcp:
 * a Netty event loop; verbs: the transport's callback executor, never the thread polling
 * the completion queue): keep it short and never block in it. Callbacks of different
 * requests may run concurrently.
 */
public interface ReadCallback {

  /**
   * The read completed. {@code data} holds exactly {@code request.length()} bytes and is
   * owned by the transport: it stays valid only during this call unless the callee calls
   * {@code data.retain()}, and then the callee must {@code release()} it.
   */
  void onSuccess(ReadRequest request, ManagedBuffer data);

  /** The read failed: refused key, out of bounds, connection lost, timeout. */
  void onFailure(ReadRequest request, Throwable cause);
}
