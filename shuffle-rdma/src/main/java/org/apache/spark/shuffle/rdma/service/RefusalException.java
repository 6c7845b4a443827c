/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;

/** A request the service refuses; the message is the one-line answer. */
final class RefusalException extends IOException {
  private static final long serialVersionUID = 1L;

  RefusalException(String message) {
    super(message);
  }
}
