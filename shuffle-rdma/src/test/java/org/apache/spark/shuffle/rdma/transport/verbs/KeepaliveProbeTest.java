/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The keepalive of one inbound connection, driven by a scripted clock and completions. */
class KeepaliveProbeTest {
  private static final long S = TimeUnit.SECONDS.toNanos(1);

  @Test
  void aLiveReaderIsProbedOncePerIntervalAndKept() {
    KeepaliveProbe p = new KeepaliveProbe(5000, 0);
    assertEquals(KeepaliveProbe.Action.NOTHING, p.step(4 * S, -1));
    assertEquals(KeepaliveProbe.Action.POST, p.step(5 * S, -1));
    // At most one probe outstanding: no second post while the first is unanswered.
    assertEquals(KeepaliveProbe.Action.NOTHING, p.step(11 * S, -1));
    assertEquals(KeepaliveProbe.Action.POST, p.step(12 * S, WcStatus.SUCCESS));
    assertEquals(KeepaliveProbe.Action.NOTHING, p.step(13 * S, WcStatus.SUCCESS));
    assertEquals(KeepaliveProbe.Action.NOTHING, p.step(16 * S, -1));
  }

  @Test
  void aFailedProbeTearsTheConnectionDown() {
    KeepaliveProbe p = new KeepaliveProbe(5000, 0);
    assertEquals(KeepaliveProbe.Action.POST, p.step(5 * S, -1));
    // The reader vanished: the probe's transport retries ran out.
    assertEquals(KeepaliveProbe.Action.TEAR_DOWN, p.step(9 * S, 12)); // IBV_WC_RETRY_EXC_ERR
    KeepaliveProbe q = new KeepaliveProbe(5000, 0);
    q.step(5 * S, -1);
    assertEquals(KeepaliveProbe.Action.TEAR_DOWN, q.step(6 * S, WcStatus.WR_FLUSH_ERR));
  }

  @Test
  void aProbeThatNeverCompletesEndsTheConnectionToo() {
    KeepaliveProbe p = new KeepaliveProbe(5000, 0);
    assertEquals(KeepaliveProbe.Action.POST, p.step(5 * S, -1));
    long overdue = 5 * S + 5 * S + KeepaliveProbe.OVERDUE_NANOS;
    assertEquals(KeepaliveProbe.Action.NOTHING, p.step(overdue, -1));
    assertEquals(KeepaliveProbe.Action.TEAR_DOWN, p.step(overdue + 1, -1));
  }

  @Test
  void intervalMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new KeepaliveProbe(0, 0));
  }
}
