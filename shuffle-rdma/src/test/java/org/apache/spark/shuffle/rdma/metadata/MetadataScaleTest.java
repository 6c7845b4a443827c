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
 * heap within 2x the encoded descriptors, answer refreshes within 100 ms at p99 with only
 * what was published since the asker's version, and resolve every checked map id. The
 * first whole-table fetch is bounded by driver egress (docs/architecture.md, scale section),
 * so its latency is printed, not asserted; its bytes are.
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
    assertTrue(r.refreshTargetMet(), "refresh p99 over 100 ms");
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
