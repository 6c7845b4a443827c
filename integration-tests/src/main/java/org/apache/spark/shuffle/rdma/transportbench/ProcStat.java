/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * CPU seconds (user + system, all threads) of a process from /proc/PID/stat. Server and
 * client run in different network namespaces of one PID namespace, so the client reads the
 * server's figure directly, before and after a measured run.
 */
final class ProcStat {
  /** USER_HZ; 100 on every Linux this runs on (the kernel ABI fixes it for /proc). */
  private static final double TICKS = 100.0;

  private ProcStat() {}

  static double cpuSeconds(long pid) {
    double[] s = userSystem(pid);
    return s[0] + s[1];
  }

  /** {user, system} CPU seconds of the process. */
  static double[] userSystem(long pid) {
    try {
      String stat = new String(Files.readAllBytes(Paths.get("/proc", Long.toString(pid),
          "stat")), StandardCharsets.US_ASCII);
      // After the ")" closing comm: field 3 (state) first; utime and stime are 14 and 15.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
      return new double[] {Long.parseLong(f[11]) / TICKS, Long.parseLong(f[12]) / TICKS};
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot read CPU time of process " + pid, e);
    }
  }
}
