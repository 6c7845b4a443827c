/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time of the whole benchmark JVM per operation ({@code cpu.ns/op}): every thread's,
 * so the callback threads of the verbs path count, and so do the JIT and GC threads (small
 * once warm). The wall time per operation (JMH's score) misses the first and overstates a
 * path that waits.
 */
public final class ProcessCpuProfiler implements InternalProfiler {
  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private long cpuBefore;

  @Override
  public String getDescription() {
    return "process CPU time per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    cpuBefore = os.getProcessCpuTime();
  }

  @Override
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    long cpu = os.getProcessCpuTime() - cpuBefore;
    long ops = Math.max(1, result.getMetadata().getAllOps());
    return List.of(new ScalarResult("cpu.ns/op", (double) cpu / ops, "ns/op",
        AggregationPolicy.AVG));
  }
}
