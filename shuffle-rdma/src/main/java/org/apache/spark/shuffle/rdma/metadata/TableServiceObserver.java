/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

/**
 * Told the driver's own work for each table request that RdmaTableEndpoint answers: from the
 * request's turn on an endpoint thread until its reply is built and serialized (Spark
 * serializes a reply on the replying thread), the CPU time of that thread and the wall time,
 * in nanoseconds. The CPU time is what the endpoint costs, whatever else the machine runs;
 * MetadataScaleSimulation asserts on it. Without an observer nothing is measured.
 */
@FunctionalInterface
public interface TableServiceObserver {
  void served(long cpuNanos, long wallNanos);
}
