/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

/**
 * Why the server refused something, sent to the peer as is. Carries no stack trace:
 * network-common answers a failed request with the exception's whole stack trace, which
 * would cost a peer nothing to make the server build, queue and send again and again.
 */
final class Refusal extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * The one text of every refused read whose key, address or length does not name live
   * registered bytes: a dead key, a wrong address half, a range past the region's end and a
   * revoked region read the same, so refusals tell a prober nothing (no liveness, no size).
   */
  static final String NO_SUCH_BYTES =
      "read refused: no live registered region under this key covers the range";

  Refusal(String message) {
    super(message, null, false, false);
  }
}
