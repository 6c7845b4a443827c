/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class OdpChoiceTest {
  private static final int SEND_RECV_WRITE = 1 | 2 | 4;

  @Test
  void autoUsesOdpOnlyWhenTheDeviceReportsRcRead() {
    assertTrue(OdpChoice.use("auto", 0x1f)); // ConnectX: SEND RECV WRITE READ ATOMIC
    assertFalse(OdpChoice.use("auto", SEND_RECV_WRITE), "ODP without READ is no use here");
    assertFalse(OdpChoice.use("auto", -1)); // rxe on 6.1: no ODP at all
    assertFalse(OdpChoice.use("auto", 0));
  }

  @Test
  void trueOnADeviceWithoutItFailsNamingTheKey() {
    assertTrue(OdpChoice.use("true", OdpChoice.RC_READ));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> OdpChoice.use("true", -1));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.verbs.odp"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> OdpChoice.use("true", SEND_RECV_WRITE));
  }

  @Test
  void falseNeverUsesIt() {
    assertFalse(OdpChoice.use("false", 0x1f));
  }

  @Test
  void theAccessFlagIsIbvAccessOnDemand() {
    // rdma-core's verbs.h: IBV_ACCESS_ON_DEMAND = 1 << 6.
    org.junit.jupiter.api.Assertions.assertEquals(64, OdpChoice.ACCESS_ON_DEMAND);
  }
}
