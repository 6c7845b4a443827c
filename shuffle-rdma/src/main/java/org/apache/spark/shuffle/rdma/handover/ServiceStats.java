/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

/** The node service's gauges and counters, as a STATS answer carries them. */
public final class ServiceStats {
  private final long registeredBytes;
  private final int openDescriptors;
  private final int applications;
  private final int outputs;
  private final long handOvers;
  private final long refusals;

  public ServiceStats(long registeredBytes, int openDescriptors, int applications, int outputs,
      long handOvers, long refusals) {
    this.registeredBytes = registeredBytes;
    this.openDescriptors = openDescriptors;
    this.applications = applications;
    this.outputs = outputs;
    this.handOvers = handOvers;
    this.refusals = refusals;
  }

  /** Bytes registered for remote reads now (index, data and checksum regions). */
  public long registeredBytes() {
    return registeredBytes;
  }

  /** Descriptors of handed-over files the service holds now. */
  public int openDescriptors() {
    return openDescriptors;
  }

  /** Applications with at least one map output served now. */
  public int applications() {
    return applications;
  }

  /** Map outputs served now. */
  public int outputs() {
    return outputs;
  }

  /** Hand-overs accepted since start (a counter). */
  public long handOvers() {
    return handOvers;
  }

  /** Requests refused since start (a counter). */
  public long refusals() {
    return refusals;
  }

  @Override
  public String toString() {
    return "registeredBytes=" + registeredBytes + " openDescriptors=" + openDescriptors
        + " applications=" + applications + " outputs=" + outputs + " handOvers=" + handOvers
        + " refusals=" + refusals;
  }
}
