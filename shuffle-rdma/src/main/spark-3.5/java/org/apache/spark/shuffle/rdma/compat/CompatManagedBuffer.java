/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.compat;

import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * Base of the plugin's ManagedBuffers, Spark 3.5 version: nothing to add. Its Spark 4 twin
 * in src/main/spark-4 implements {@code convertToNettyForSsl}, which Spark 4 added.
 */
public abstract class CompatManagedBuffer extends ManagedBuffer {
}
