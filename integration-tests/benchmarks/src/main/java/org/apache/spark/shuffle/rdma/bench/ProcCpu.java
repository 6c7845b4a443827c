/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time of whole executor JVMs (all threads: task threads, and the serving side, which
 * Spark's stage metrics do not see) from /proc/&lt;pid&gt;/stat utime+stime. The executors run
 * on this same machine (worker network namespaces share the PID namespace), so the driver
 * finds them by command line: CoarseGrainedExecutorBackend with this application's id.
 */
public final class ProcCpu {
  private static final double TICKS = clockTicks();

  private ProcCpu() {}

  /** pid to command line, for the executor JVMs of the given application. */
  public static Map<Long, String> executorPids(String appId) {
    Map<Long, String> out = new LinkedHashMap<>();
    try (Stream<Path> procs = Files.list(Paths.get("/proc"))) {
      procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
          .forEach(p -> {
            try {
              String cmd = new String(Files.readAllBytes(p.resolve("cmdline")),
                  StandardCharsets.UTF_8).replace('\0', ' ');
              if (cmd.contains("CoarseGrainedExecutorBackend") && cmd.contains(appId)) {
                out.put(Long.parseLong(p.getFileName().toString()), cmd);
              }
            } catch (IOException | RuntimeException ignored) {
              // the process went away
            }
          });
    } catch (IOException e) {
      throw new IllegalStateException("cannot list /proc", e);
    }
    return out;
  }

  /** utime+stime of one process in seconds, or -1 if it is gone. */
  public static double cpuSeconds(long pid) {
    try {
      String stat = new String(Files.readAllBytes(Paths.get("/proc", Long.toString(pid), "stat")),
          StandardCharsets.US_ASCII);
      // Fields after the ")" that closes comm: state is field 3, utime 14, stime 15.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** Sum of CPU seconds of the given pids. */
  public static double total(Iterable<Long> pids) {
    double sum = 0;
    for (long p : pids) {
      double c = cpuSeconds(p);
      if (c > 0) sum += c;
    }
    return sum;
  }

  private static double clockTicks() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
      p.waitFor();
      return Double.parseDouble(s);
    } catch (Exception e) {
      return 100.0;
    }
  }
}
