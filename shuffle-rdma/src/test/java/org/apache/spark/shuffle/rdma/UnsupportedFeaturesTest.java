/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** The Spark features the manager refuses or turns off, at construction (no SparkEnv yet). */
class UnsupportedFeaturesTest {

  private static SparkConf conf() {
    return new SparkConf(false).set("spark.shuffle.rdma.transport", "tcp");
  }

  @Test
  void oldFetchProtocolIsRefusedWithTheKeyInTheMessage() {
    SparkConf c = conf().set("spark.shuffle.useOldFetchProtocol", "true");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new RdmaShuffleManager(c, true));
    assertTrue(e.getMessage().startsWith("spark.shuffle.useOldFetchProtocol=true is not "
        + "supported by org.apache.spark.shuffle.rdma.RdmaShuffleManager"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new RdmaShuffleManager(c, false));
  }

  @Test
  void pushBasedShuffleIsTurnedOffInTheApplicationsConf() {
    SparkConf c = conf().set("spark.shuffle.push.enabled", "true");
    RdmaShuffleManager m = new RdmaShuffleManager(c, true);
    try {
      assertEquals("false", c.get("spark.shuffle.push.enabled"));
    } finally {
      m.stop();
    }
  }

  @Test
  void defaultsStartAndLeaveTheConfAlone() {
    SparkConf c = conf();
    RdmaShuffleManager m = new RdmaShuffleManager(c, true);
    try {
      assertTrue(!c.contains("spark.shuffle.push.enabled"));
    } finally {
      m.stop();
    }
  }
}
