/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * What one thread wake-up costs on this machine: two threads hand a turn back and forth with
 * park/unpark, each parking while it waits, so every round trip is two wake-ups. Prints the
 * process CPU and wall time per round trip, three times. The verbs path of the client cost
 * benchmark needs two wake-ups per fetch (the completion event, Spark's result queue): this
 * says what they cost here (docs/benchmarks.md).
 * <pre>
 *   java -cp integration-tests/benchmarks/target/classes \
 *     org.apache.spark.shuffle.rdma.bench.clientcost.WakeCost 50000
 * </pre>
 */
public final class WakeCost {
  private WakeCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    for (int rep = 0; rep < 3; rep++) {
      AtomicInteger turn = new AtomicInteger();
      Thread main = Thread.currentThread();
      Thread other = new Thread(() -> {
        for (int i = 0; i < n; i++) {
          while (turn.get() != 1) {
            LockSupport.park();
          }
          turn.set(0);
          LockSupport.unpark(main);
        }
      }, "wake-peer");
      other.start();
      long cpu0 = os.getProcessCpuTime();
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        turn.set(1);
        LockSupport.unpark(other);
        while (turn.get() != 0) {
          LockSupport.park();
        }
      }
      long cpu = os.getProcessCpuTime() - cpu0;
      long wall = System.nanoTime() - t0;
      other.join();
      System.out.printf("WAKE round_trips=%d cpu_us_per_round_trip=%.1f wall_us_per_round_trip=%.1f"
          + " (two wake-ups each)%n", n, cpu / 1e3 / n, wall / 1e3 / n);
    }
  }
}
