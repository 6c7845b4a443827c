/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

/**
 * When a repeated event is worth a log line: its 1st, 2nd, 4th, 8th ... occurrence. Peers
 * decide how often refusals happen; the log must stay readable (and small) however hostile
 * they are, yet show that it keeps happening and how often.
 */
public final class RareLog {
  private RareLog() {}

  /** True for counts 1, 2, 4, 8, ...: log this one, with the count. */
  public static boolean due(long count) {
    return count > 0 && Long.bitCount(count) == 1;
  }
}
