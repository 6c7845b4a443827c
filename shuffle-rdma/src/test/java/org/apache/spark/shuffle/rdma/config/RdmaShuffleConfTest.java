/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

class RdmaShuffleConfTest {

  private static SparkConf conf() {
    return new SparkConf(false);
  }

  @Test
  void defaults() {
    RdmaShuffleConf c = new RdmaShuffleConf(conf());
    assertEquals("auto", c.transport());
    assertEquals(1L << 30, c.regionSize());
    assertEquals(0, c.port());
    assertEquals(256, c.maxReadsInFlightPerPeer());
    assertEquals(120_000L, c.readTimeoutMs());
  }

  @Test
  void transportIsCaseInsensitive() {
    assertEquals("tcp", new RdmaShuffleConf(conf().set("spark.shuffle.rdma.transport", " TCP "))
        .transport());
  }

  @Test
  void badTransportNamesKeyAndChoices() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.transport", "infiniband")));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.transport"), e.getMessage());
    assertTrue(e.getMessage().contains("auto"), e.getMessage());
    assertTrue(e.getMessage().contains("verbs"), e.getMessage());
  }

  @Test
  void regionSizeOverOneGibFailsWithRange() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.regionSize", "2g")));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.regionSize"), e.getMessage());
    assertTrue(e.getMessage().contains("[1m, 1g]"), e.getMessage());
  }

  @Test
  void regionSizeAcceptsUnits() {
    assertEquals(64L << 20,
        new RdmaShuffleConf(conf().set("spark.shuffle.rdma.regionSize", "64m")).regionSize());
  }

  @Test
  void nonNumericPortFailsNamingKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.port", "http")));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.port"), e.getMessage());
  }

  @Test
  void portOutOfRangeFails() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.port", "70000")));
    assertTrue(e.getMessage().contains("[0, 65535]"), e.getMessage());
  }

  @Test
  void trafficClassIsUnsetByDefaultAndTakesAToSByte() {
    String key = RdmaConf.VERBS_TRAFFIC_CLASS().key();
    assertEquals(java.util.OptionalInt.empty(), new RdmaShuffleConf(conf()).verbsTrafficClass());
    assertEquals(java.util.OptionalInt.of(106),
        new RdmaShuffleConf(conf().set(key, "106")).verbsTrafficClass());
    assertEquals(java.util.OptionalInt.of(0),
        new RdmaShuffleConf(conf().set(key, "0")).verbsTrafficClass());
    assertEquals(java.util.OptionalInt.of(255),
        new RdmaShuffleConf(conf().set(key, "255")).verbsTrafficClass());
  }

  @Test
  void badTrafficClassFailsNamingTheKey() {
    String key = RdmaConf.VERBS_TRAFFIC_CLASS().key();
    for (String bad : new String[] {"256", "-1", "0x6a", "af31", ""}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new RdmaShuffleConf(conf().set(key, bad)), bad);
      assertTrue(e.getMessage().contains(key), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set(key, "300")));
    assertTrue(e.getMessage().contains("[0, 255]"), e.getMessage());
  }

  @Test
  void zeroReadsInFlightFails() {
    assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.maxReadsInFlightPerPeer", "0")));
  }

  @Test
  void queuePairsPerPeerDefaultsToTheDeviceAndIsRangeChecked() {
    assertEquals(0, new RdmaShuffleConf(conf()).verbsQueuePairsPerPeer());
    assertEquals(16, new RdmaShuffleConf(conf().set("spark.shuffle.rdma.verbs.queuePairsPerPeer",
        "16")).verbsQueuePairsPerPeer());
    for (String bad : new String[] {"17", "-1"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.verbs.queuePairsPerPeer",
              bad)));
      assertTrue(e.getMessage().contains("spark.shuffle.rdma.verbs.queuePairsPerPeer")
          && e.getMessage().contains("[0, 16]"), e.getMessage());
    }
  }

  @Test
  void tooShortTimeoutFails() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.readTimeout", "5ms")));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.readTimeout"), e.getMessage());
  }

  @Test
  void unknownKeyFailsWithSuggestion() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleConf(conf().set("spark.shuffle.rdma.transprot", "tcp")));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.transprot"), e.getMessage());
    assertTrue(e.getMessage().contains("did you mean spark.shuffle.rdma.transport"),
        e.getMessage());
  }
}
