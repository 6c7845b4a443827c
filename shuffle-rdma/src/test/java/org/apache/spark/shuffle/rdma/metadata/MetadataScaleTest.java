/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * MetadataScaleSimulation at a size this test run affords (100 executors, 5,000 map
 * outputs, all asking at once): the real endpoints on real RpcEnvs must keep the driver's
 * heap within 2x the encoded descriptors, spend at most 1 ms of the table endpoint's CPU on
 * a refresh at p99 (the driver's own work, whatever else the machine runs) and send only
 * what was published since the asker's version, and resolve every checked map id. The
 * latencies executors see (wall clock, which grows with the machine's load: the load average
 * is printed beside them) are printed, not asserted; the first whole-table fetch is bounded
 * by driver egress anyway (docs/architecture.md, scale section); its bytes are asserted.
 */
class MetadataScaleTest {

  @Test
  void metadataPlaneMeetsItsTargetsAtReducedScale() throws Exception {
    MetadataScaleSimulation.Settings s = new MetadataScaleSimulation.Settings();
    s.executors = 100;
    s.mapOutputs = 5_000;
    s.clientEnvs = 4;
    s.concurrency = 100;
    s.publishThreads = 8;
    MetadataScaleSimulation.Result r = MetadataScaleSimulation.run(s);
    System.out.print(r.report(s));

    assertTrue(r.heapTargetMet(),
        "driver heap " + r.heapBytes + " B for " + r.encodedBytes + " B of descriptors");
    assertTrue(r.refreshTargetMet(), "driver CPU per refresh over 1 ms at p99: "
        + MetadataScaleSimulation.percentile(r.refreshServiceCpuNanos, 99) + " ns");
    // A whole table per executor on the first fetch; then only the late records.
    long perTable = r.fullEgressBytes / s.executors;
    assertTrue(perTable >= r.logBytes && perTable < r.logBytes + r.directoryBytes + 64 * 1024,
        perTable + " B per first fetch, table " + r.logBytes);
    long lateRecords = (long) r.latePublished * (r.logBytes / s.mapOutputs + 1);
    assertTrue(r.refreshEgressBytes <= s.executors * (r.fixedReplyBytes + lateRecords + 64),
        "refresh sent " + r.refreshEgressBytes + " B for " + r.latePublished + " late records");
    assertEquals(4000, r.checkedLookups);
  }
}
