/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.compat;

import java.io.IOException;

import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * Base of the plugin's ManagedBuffers, Spark 4.x version: Spark 4 added
 * {@code convertToNettyForSsl}, which the plugin answers like {@code convertToNetty} (its
 * buffers are plain memory, never file regions). Spark 3.5's ManagedBuffer has no such method;
 * its twin in src/main/spark-3.5 adds nothing.
 */
public abstract class CompatManagedBuffer extends ManagedBuffer {
  @Override
  public Object convertToNettyForSsl() throws IOException {
    return convertToNetty();
  }
}
