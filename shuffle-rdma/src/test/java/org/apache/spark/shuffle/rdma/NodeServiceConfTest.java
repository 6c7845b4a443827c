/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.junit.jupiter.api.Test;

/**
 * What spark.shuffle.rdma.service.socket turns on: the hand-over, reliable storage in the
 * driver components Spark loads (RdmaShuffleDataIO), host-local disk reads off; and what turns
 * it off again: spark.authenticate, which the service cannot serve yet.
 */
class NodeServiceConfTest {
  private static SparkConf conf() {
    return new SparkConf(false).set(RdmaConf.TRANSPORT().key(), "tcp");
  }

  private static boolean reliable(SparkConf c) {
    return new RdmaShuffleDataIO(c).driver().supportsReliableStorage();
  }

  @Test
  void withoutASocketNothingChanges() {
    SparkConf c = conf();
    assertFalse(new RdmaShuffleConf(c).handsOverToService());
    assertFalse(reliable(c));
    RdmaShuffleManager m = new RdmaShuffleManager(c, true);
    try {
      assertFalse(c.contains(RdmaShuffleManager.HOST_LOCAL_DISK));
    } finally {
      m.stop();
    }
  }

  @Test
  void aSocketMakesStorageReliableAndTurnsHostLocalReadsOff() {
    handsOverReliably(conf().set(RdmaConf.SERVICE_SOCKET().key(),
        "/run/shuffle-rdma/service.sock"));
  }

  /** The service authenticates each application's readers with its secret (ServiceAuthTest). */
  @Test
  void authenticationKeepsTheHandOver() {
    handsOverReliably(conf().set(RdmaConf.SERVICE_SOCKET().key(),
        "/run/shuffle-rdma/service.sock")
        .set("spark.authenticate", "true").set("spark.authenticate.secret", "s3cret"));
  }

  private static void handsOverReliably(SparkConf c) {
    assertTrue(new RdmaShuffleConf(c).handsOverToService());
    assertTrue(reliable(c));
    RdmaShuffleManager m = new RdmaShuffleManager(c, false);
    try {
      assertEquals("false", c.get(RdmaShuffleManager.HOST_LOCAL_DISK));
    } finally {
      m.stop();
    }
  }
}
