/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Driver side: which RPC sender speaks for which executor id. The first
 * {@code RegisterTransport} of an executor id binds it to its sender; afterwards only that
 * sender may register it again or publish descriptors naming it.
 *
 * <p>The sender is what Spark's {@code RpcCallContext.senderAddress} reports. Executors run
 * client-mode RpcEnvs (no server socket): for them Spark reports the remote address of the
 * connection the message came on (host and ephemeral port), the same address Spark's own
 * scheduler backend records for the executor at registration and whose disconnection it
 * treats as the executor's loss. With {@code spark.rpc.io.numConnectionsPerPeer} above 1 an
 * executor's messages may come on several connections, so only the host is bound
 * ({@code hostOnly}).
 *
 * <p>Not covered: Spark takes the sender address a message declares for itself (a
 * server-mode RpcEnv's own address) as it is, so an executor that writes its own RPC frames
 * can declare another executor's connection address, if it learns it (host and ephemeral
 * port of that executor's connection to the driver). Each wrong guess is refused.
 */
public final class ExecutorBinding {
  /** Bound to a removed executor id: no identity (a host, or host:port) is ever equal to it. */
  private static final String REMOVED = "\0removed";

  private final ConcurrentHashMap<String, String> senders = new ConcurrentHashMap<>();
  private final boolean hostOnly;

  public ExecutorBinding(boolean hostOnly) {
    this.hostOnly = hostOnly;
  }

  /** The identity a sender is bound by: "host:port", or the host alone when hostOnly. */
  public String identity(String host, int port) {
    return hostOnly ? host : host + ":" + port;
  }

  /**
   * Binds {@code executorId} to {@code sender} unless it is bound already. Returns null when
   * the id is (now) bound to this sender, else why not.
   */
  public String bind(String executorId, String sender) {
    String bound = senders.putIfAbsent(executorId, sender);
    return bound == null || bound.equals(sender) ? null : mismatch(executorId, bound, sender);
  }

  /** Null when {@code executorId} is bound to {@code sender}, else why not. */
  public String check(String executorId, String sender) {
    String bound = senders.get(executorId);
    if (bound == null) {
      return "executor " + executorId + " has not registered its transport (sender "
          + sender + ")";
    }
    return bound.equals(sender) ? null : mismatch(executorId, bound, sender);
  }

  /**
   * Spark removed {@code executorId}: nobody may register or publish as it any more, not even
   * its old sender (Spark never reuses an executor id, so nothing legitimate is refused).
   */
  public void retire(String executorId) {
    senders.put(executorId, REMOVED);
  }

  /** Executor ids bound so far. */
  public int size() {
    return senders.size();
  }

  private static String mismatch(String executorId, String bound, String sender) {
    if (REMOVED.equals(bound)) {
      return "executor " + executorId + " was removed (sender " + sender + ")";
    }
    return "executor " + executorId + " is bound to sender " + bound + ", not " + sender;
  }
}
