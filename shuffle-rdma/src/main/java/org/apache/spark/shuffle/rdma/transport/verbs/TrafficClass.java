/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.OptionalInt;

/**
 * The IP type-of-service byte of the verbs transport's RoCE v2 traffic
 * (spark.shuffle.rdma.verbs.trafficClass), as the transport logs it and the doctor prints
 * it: the byte is DSCP (upper six bits, what switches classify by) and ECN (lower two).
 * Free of Spark classes: the doctor runs without Spark, so callers pass the key.
 */
public final class TrafficClass {
  private TrafficClass() {}

  /** E.g. "ToS 106 (DSCP 26, ECN ECT(0))". */
  public static String describe(int tos) {
    String[] ecn = {"not ECN-capable", "ECT(1)", "ECT(0)", "CE"};
    return "ToS " + tos + " (DSCP " + (tos >> 2) + ", ECN " + ecn[tos & 3] + ")";
  }

  /** What connections use: the configured byte ({@code key}), or the device's default. */
  public static String describe(OptionalInt tos, String key) {
    return tos.isPresent() ? describe(tos.getAsInt()) + " on every connection (" + key + ")"
        : "the device's default (" + key + " unset)";
  }
}
