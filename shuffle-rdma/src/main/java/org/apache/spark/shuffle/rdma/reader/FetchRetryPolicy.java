/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.net.ConnectException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.netty.channel.ConnectTimeoutException;

import org.apache.spark.network.shuffle.ErrorHandler;
import org.apache.spark.shuffle.rdma.transport.ReadRefusedException;

/**
 * Which failed one-sided fetches Spark's {@link
 * org.apache.spark.network.shuffle.RetryingBlockTransferor} may try again, within
 * spark.shuffle.io.maxRetries and spark.shuffle.io.retryWait as for its own client. The
 * transferor already retries only I/O failures; this policy takes out those another attempt
 * cannot cure, so they become fetch failures at once:
 *
 * <ul>
 *   <li>a refusal ({@link ReadRefusedException}): the peer answered that no live region covers
 *       the read, refused the batch, or rejected the connection;
 *   <li>a refused reconnect on tcp (connection refused: nothing listens where the executor
 *       served, so its process is gone); a connect timeout is a blip and is retried;
 *   <li>a block whose bytes differ from its writer's checksum (the file changed under its
 *       registration; Spark recomputes it);
 *   <li>any failure once the driver has told this reader the executor was removed, unless
 *       every block of the fetch is served by a node service the executor handed its
 *       outputs to (the service outlives the executor; the caller decides).
 * </ul>
 *
 * Everything else (a lost or reset connection, a transport retry error, a flushed READ, a
 * read timeout) is retried: a new attempt reconnects and posts the blocks still outstanding.
 */
final class FetchRetryPolicy implements ErrorHandler {
  private final BooleanSupplier peerRemoved;
  private final AtomicLong retries;

  /**
   * @param peerRemoved true once the executor serving these blocks is known to be removed
   * @param retries counts the retries this policy allows
   */
  FetchRetryPolicy(BooleanSupplier peerRemoved, AtomicLong retries) {
    this.peerRemoved = peerRemoved;
    this.retries = retries;
  }

  @Override
  public boolean shouldRetryError(Throwable t) {
    // Spark asks only while retries are left, and retries when this says yes.
    boolean retry = curable(t) && !peerRemoved.getAsBoolean();
    if (retry) {
      retries.incrementAndGet();
    }
    return retry;
  }

  static boolean curable(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ReadRefusedException || c instanceof ChecksumMismatchException) {
        return false;
      }
      if (c instanceof ConnectException && !(c instanceof ConnectTimeoutException)) {
        return false;
      }
    }
    return true;
  }
}
