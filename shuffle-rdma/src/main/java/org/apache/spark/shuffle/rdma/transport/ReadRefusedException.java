/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.IOException;

/**
 * The peer answered, and the answer is no: no live registered region covers the read (a
 * revoked or wrong key, a range outside the region), the peer refused the whole batch, or it
 * rejected the connection. Asking again gets the same answer, so a reader fails the block at
 * once instead of retrying; every other read failure (a lost connection, a timeout, a
 * transport retry error) is a plain {@link IOException} that another attempt may cure.
 */
public final class ReadRefusedException extends IOException {
  private static final long serialVersionUID = 1L;

  public ReadRefusedException(String message) {
    super(message);
  }

  public ReadRefusedException(String message, Throwable cause) {
    super(message, cause);
  }

  /** True when {@code t} or one of its causes is a refusal. */
  public static boolean isRefusal(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ReadRefusedException) {
        return true;
      }
    }
    return false;
  }
}
