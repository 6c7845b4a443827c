/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.junit.jupiter.api.Test;

/** Transport choice on this host, which has no RDMA device. */
class TransportFactoryTest {

  private static TransportSettings settings(SparkConf conf) {
    return new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", null, "app", 1);
  }

  /** Both providers are found through META-INF/services, by the names the key takes. */
  @Test
  void providersAreFoundByName() {
    assertEquals("tcp", TransportFactory.provider("tcp").name());
    assertEquals("verbs", TransportFactory.provider("verbs").name());
    assertEquals(null, TransportFactory.provider("carrier-pigeon"));
  }

  @Test
  void tcpWhenAsked() throws Exception {
    try (ShuffleTransport t = TransportFactory.create(
        settings(new SparkConf(false).set("spark.shuffle.rdma.transport", "tcp")))) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void autoFallsBackToTcpWithoutRdma() throws Exception {
    try (ShuffleTransport t = TransportFactory.create(settings(new SparkConf(false)))) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void forcedVerbsFailsAtStartupSayingWhatToDo() {
    IOException e = assertThrows(IOException.class, () -> TransportFactory.create(
        settings(new SparkConf(false).set("spark.shuffle.rdma.transport", "verbs"))));
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.transport=verbs"), e.getMessage());
    assertTrue(e.getMessage().contains("spark.shuffle.rdma.transport=tcp"), e.getMessage());
    assertTrue(e.getMessage().contains("doctor"), e.getMessage());
  }

  @Test
  void networkEncryptionRefusesPlaintextRdma() {
    SparkConf conf = new SparkConf(false)
        .set("spark.shuffle.rdma.transport", "verbs")
        .set("spark.authenticate", "true")
        .set("spark.network.crypto.enabled", "true");
    IOException e = assertThrows(IOException.class,
        () -> TransportFactory.create(settings(conf)));
    assertTrue(e.getMessage().contains("spark.network.crypto.enabled"), e.getMessage());
    assertTrue(e.getMessage().contains("allowUnencryptedRdma"), e.getMessage());
  }

  @Test
  void encryptedFilesOrAnExplicitWaiverLiftTheRefusal() {
    SparkConf base = new SparkConf(false)
        .set("spark.authenticate", "true")
        .set("spark.network.crypto.enabled", "true");
    assertTrue(new RdmaShuffleConf(base.clone()).rdmaEncryptionConflict() != null);
    assertEquals(null, new RdmaShuffleConf(base.clone()
        .set("spark.io.encryption.enabled", "true")).rdmaEncryptionConflict());
    assertEquals(null, new RdmaShuffleConf(base.clone()
        .set("spark.shuffle.rdma.allowUnencryptedRdma", "true")).rdmaEncryptionConflict());
  }
}
