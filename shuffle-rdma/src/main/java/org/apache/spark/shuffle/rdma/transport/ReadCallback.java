/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * Completion of a {@link ReadRequest}. Called once per request, on a transport thread (tcp:
 * a Netty event loop; verbs: the transport's callback executor, or, for a success
 * {@link #deliversOnCompletionThread} accepts, the thread polling the completion queue): keep
 * it short and never block in it. Callbacks of different requests may run concurrently.
 */
public interface ReadCallback {

  /**
   * Whether {@code request}'s success may run on the verbs transport's completion thread
   * instead of being handed to its callback threads: true only for a success that hands the
   * bytes on and returns (no read posted, no connect, no lock another read's callback holds
   * long, no disk, no work growing with the bytes), since the completion queue waits while it
   * runs. Saves a thread hand-off per completion batch. Failures always go to the callback
   * threads. Default false.
   */
  default boolean deliversOnCompletionThread(ReadRequest request) {
    return false;
  }

  /**
   * The read completed. {@code data} holds exactly {@code request.length()} bytes and is
   * owned by the transport: it stays valid only during this call unless the callee calls
   * {@code data.retain()}, and then the callee must {@code release()} it.
   */
  void onSuccess(ReadRequest request, ManagedBuffer data);

  /** The read failed: refused key, out of bounds, connection lost, timeout. */
  void onFailure(ReadRequest request, Throwable cause);
}
