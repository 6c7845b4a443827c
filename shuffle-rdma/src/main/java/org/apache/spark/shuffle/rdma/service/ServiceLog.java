/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.PrintStream;
import java.time.Instant;

/**
 * The node service's log: one timestamped line per event on stdout (the service runs in the
 * foreground under systemd, a container runtime or a test, which keep stdout).
 */
final class ServiceLog {
  private final PrintStream out;

  ServiceLog(PrintStream out) {
    this.out = out;
  }

  synchronized void info(String line) {
    out.println(Instant.now() + " " + line);
    out.flush();
  }

  /** The ready line, without a timestamp, so scripts can match it from its start. */
  synchronized void ready(String line) {
    out.println(line);
    out.flush();
  }
}
