/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * When a read stops waiting for receive-pool memory (PoolWait): only after the configured
 * wait with no memory found, measured from the first shortage; memory found in between
 * starts the next wait afresh. The end-to-end case (a pool held by unconsumed reads) runs in
 * the Soft-RoCE self-test (VerbsSelfTest.heldPool) and the two-host poolpressure workload.
 */
class PoolWaitTest {
  private static final long MS = 1_000_000L;

  @Test
  void waitsTheConfiguredTimeFromTheFirstShortage() {
    PoolWait w = new PoolWait(250 * MS);
    assertFalse(w.waiting());
    assertFalse(w.givesUp(1_000 * MS));
    assertTrue(w.waiting());
    assertFalse(w.givesUp(1_100 * MS));
    assertFalse(w.givesUp(1_249 * MS));
    assertTrue(w.givesUp(1_250 * MS));
    // Once given up, the reads behind it do not wait again while the shortage lasts.
    assertTrue(w.givesUp(1_251 * MS));
  }

  @Test
  void memoryFoundStartsANewWait() {
    PoolWait w = new PoolWait(250 * MS);
    assertFalse(w.givesUp(0));
    w.memoryFound();
    assertFalse(w.waiting());
    assertFalse(w.givesUp(240 * MS));
    assertFalse(w.givesUp(480 * MS));
    assertTrue(w.givesUp(490 * MS));
  }

  @Test
  void zeroNeverWaitsAndNanoTimeMayBeNegative() {
    assertTrue(new PoolWait(0).givesUp(Long.MIN_VALUE + 1));
    PoolWait w = new PoolWait(10 * MS);
    assertFalse(w.givesUp(Long.MAX_VALUE - 5 * MS));
    assertTrue(w.givesUp(Long.MAX_VALUE - 5 * MS + 10 * MS)); // wraps past MAX_VALUE
  }

  @Test
  void negativeWaitIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new PoolWait(-1));
  }
}
