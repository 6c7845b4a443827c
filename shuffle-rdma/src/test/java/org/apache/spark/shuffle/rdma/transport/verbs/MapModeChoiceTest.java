/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;

import org.apache.spark.shuffle.rdma.transport.verbs.MapModeChoice.Mode;
import org.junit.jupiter.api.Test;

class MapModeChoiceTest {

  @Test
  void autoIsSharedReadOnlyFromLinux62() {
    for (String k : new String[] {"6.2.0", "6.12.57+deb13-amd64", "6.8.0-48-generic", "7.0.1"}) {
      MapModeChoice c = MapModeChoice.choose("auto", k);
      assertEquals(Mode.SHARED, c.mode, k);
      assertEquals(FileChannel.MapMode.READ_ONLY, c.mode.fileMode);
      assertTrue(c.mayFallBack);
    }
  }

  @Test
  void autoTriesSharedReadOnlyBefore62Too() {
    // Debian 12, RHEL 8 and 9, Ubuntu 22.04 usually refuse it (FOLL_WRITE pins), but vendor
    // kernels backport 6.2's pin: the kernel's refusal decides, not the release number.
    for (String k : new String[] {"6.1.0-27-amd64", "4.18.0-513.el8.x86_64",
        "5.14.0-427.el9.x86_64", "5.15.0-105-generic", "6.1"}) {
      MapModeChoice c = MapModeChoice.choose("auto", k);
      assertEquals(Mode.SHARED, c.mode, k);
      assertTrue(c.mayFallBack, "auto falls back on the kernel's refusal");
      assertTrue(c.refusalExpected, k);
    }
    assertFalse(MapModeChoice.choose("auto", "6.12.57+deb13-amd64").refusalExpected);
  }

  @Test
  void anUnknownReleaseTriesSharedAndExpectsRefusal() {
    MapModeChoice c = MapModeChoice.choose("auto", "weird");
    assertEquals(Mode.SHARED, c.mode);
    assertTrue(c.refusalExpected);
    assertEquals(Mode.SHARED, MapModeChoice.choose("auto", null).mode);
  }

  @Test
  void explicitModesWinAndNeverFallBack() {
    assertEquals(Mode.PRIVATE, MapModeChoice.choose("private", "6.12.0").mode);
    assertEquals(Mode.SHARED, MapModeChoice.choose("shared", "6.1.0").mode);
    assertEquals(Mode.SHARED_WRITABLE, MapModeChoice.choose("sharedWritable", "6.12.0").mode);
    assertFalse(MapModeChoice.choose("sharedWritable", "6.1.0").mayFallBack);
    assertEquals(FileChannel.MapMode.PRIVATE, Mode.PRIVATE.fileMode);
    assertThrows(IllegalArgumentException.class, () -> MapModeChoice.choose("copy", "6.1"));
  }

  @Test
  void parsesMajorMinor() {
    assertEquals(6, MapModeChoice.parse("6.10.3")[0]);
    assertEquals(10, MapModeChoice.parse("6.10.3")[1]);
    assertEquals(null, MapModeChoice.parse("x6.1"));
  }
}
