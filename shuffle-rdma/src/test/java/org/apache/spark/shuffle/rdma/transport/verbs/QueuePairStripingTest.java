/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class QueuePairStripingTest {

  /** Lanes with fixed loads. */
  private static QueuePairStriping.Lanes lanes(int... loads) {
    return new QueuePairStriping.Lanes() {
      @Override
      public int lanes() {
        return loads.length;
      }

      @Override
      public int load(int lane) {
        return loads[lane];
      }
    };
  }

  @Test
  void defaultIsOneOnSoftwareDevicesAndSeveralOnHardware() {
    assertEquals(1, QueuePairStriping.perPeer(0, "rxe0", 0xFFFFFF));
    assertEquals(1, QueuePairStriping.perPeer(0, "siw_eth0", 0x626d74));
    assertEquals(1, QueuePairStriping.perPeer(0, "roce0", 0xFFFFFF), "renamed rxe: by vendor");
    assertEquals(QueuePairStriping.HARDWARE_DEFAULT, QueuePairStriping.perPeer(0, "mlx5_0", 0x02c9));
    assertTrue(QueuePairStriping.HARDWARE_DEFAULT > 1);
    assertEquals(2, QueuePairStriping.perPeer(2, "rxe0", 0xFFFFFF), "a set value wins");
    assertEquals(16, QueuePairStriping.perPeer(16, "mlx5_0", 0x02c9));
  }

  @Test
  void outOfRangeFailsNamingTheKey() {
    for (int bad : new int[] {-1, 17}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> QueuePairStriping.perPeer(bad, "mlx5_0", 0x02c9));
      assertTrue(e.getMessage().contains("spark.shuffle.rdma.verbs.queuePairsPerPeer"),
          e.getMessage());
    }
  }

  @Test
  void softwareDevices() {
    assertTrue(QueuePairStriping.softwareDevice("rxe0", -1));
    assertTrue(QueuePairStriping.softwareDevice("SIW0", -1));
    assertFalse(QueuePairStriping.softwareDevice("mlx5_1", 0x02c9));
    assertFalse(QueuePairStriping.softwareDevice(null, -1));
  }

  @Test
  void picksTheLeastLoadedLane() {
    assertEquals(2, QueuePairStriping.leastLoaded(lanes(5, 3, 1, 4), 0));
    assertEquals(2, QueuePairStriping.leastLoaded(lanes(5, 3, 1, 4), 3));
    assertEquals(1, QueuePairStriping.leastLoaded(lanes(9, 0), 0));
  }

  @Test
  void equalLoadsRotateFromTheStart() {
    QueuePairStriping.Lanes even = lanes(2, 2, 2);
    assertEquals(0, QueuePairStriping.leastLoaded(even, 0));
    assertEquals(1, QueuePairStriping.leastLoaded(even, 1));
    assertEquals(2, QueuePairStriping.leastLoaded(even, 2));
    assertEquals(0, QueuePairStriping.leastLoaded(even, 3));
    assertEquals(2, QueuePairStriping.leastLoaded(even, -1), "a wrapped counter still works");
    // Only ties rotate: a lighter lane behind the start is still found.
    assertEquals(0, QueuePairStriping.leastLoaded(lanes(1, 2, 2), 1));
  }

  @Test
  void aLaneThatTakesNoReadsIsAvoided() {
    int broken = Integer.MAX_VALUE;
    assertEquals(1, QueuePairStriping.leastLoaded(lanes(broken, 40), 0));
    assertEquals(0, QueuePairStriping.leastLoaded(lanes(broken, broken), 0),
        "all broken: any (its reads fail or go to its replacement)");
  }

  @Test
  void aBatchIsCutIntoOneRunPerLane() {
    assertEquals(12, QueuePairStriping.runLength(24, 2));
    assertEquals(9, QueuePairStriping.runLength(33, 4)); // 9, 9, 9, 6
    assertEquals(1, QueuePairStriping.runLength(3, 4)); // fewer reads than lanes
    assertEquals(1, QueuePairStriping.runLength(0, 4));
    assertEquals(7, QueuePairStriping.runLength(7, 1));
  }
}
