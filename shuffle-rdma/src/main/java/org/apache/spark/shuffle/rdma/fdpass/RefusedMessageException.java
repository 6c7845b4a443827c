/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.IOException;

/**
 * A received message was refused (too many descriptors, too long, foreign control data) and
 * discarded with every descriptor it carried; the connection itself is still usable.
 */
public final class RefusedMessageException extends IOException {
  private static final long serialVersionUID = 1L;

  RefusedMessageException(String message) {
    super(message);
  }
}
