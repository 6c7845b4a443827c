/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.Map;
import org.apache.spark.SparkContext;

/**
 * One workload of the two-host run after the demo ({@link TwoHostWorkloads}): a Spark job whose
 * whole result renders as text, compared with the same job's result under Spark's sort
 * shuffle (computed on the host by {@link WorkloadReferences}), then the plugin's counters for
 * this workload alone asserted.
 */
interface Workload {
  /** Short name: the reference file's name and the prefix of this workload's checks. */
  String name();

  /** Runs the job (a failed job throws); the result as text. */
  String run(SparkContext sc) throws Exception;

  /** Equal results; text equality unless the workload allows more (float rounding). */
  default boolean sameResult(String reference, String result) {
    return reference.equals(result);
  }

  /** A one-line summary of a result text, for the check's detail. */
  default String describe(String result) {
    long lines = result.lines().count();
    return lines + " lines, first " + result.lines().findFirst().orElse("(none)");
  }

  /**
   * Asserts the plugin's counters of this workload ({@code delta}: counters moved during it,
   * gauges as they stand after it); by default those of a clean run, as for the demo.
   */
  default void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    TwoHostVerbsRun.counters(delta, hosts, tally, zeroPinnedCopy, checks);
  }
}
