/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.TransportFactory;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.junit.jupiter.api.Test;

/** On a host without RDMA (CI): auto falls back to tcp, a forced verbs says what is missing. */
class VerbsFallbackTest {

  private static TransportSettings settings(String transport) {
    SparkConf conf = new SparkConf(false).set("spark.shuffle.rdma.transport", transport);
    return new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", null, "app-test", 2);
  }

  private static void assumeNoRdma() {
    assumeFalse(Files.isDirectory(Paths.get("/sys/class/infiniband")), "host has RDMA devices");
  }

  @Test
  void providerSaysWhatIsMissing() {
    assumeNoRdma();
    String why = new VerbsTransportProvider().unavailableReason(settings("verbs"));
    assertNotNull(why);
    assertTrue(why.contains("/sys/class/infiniband does not exist"), why);
    assertTrue(why.contains("modprobe rdma_rxe"), why);
  }

  @Test
  void autoFallsBackToTcp() throws IOException {
    assumeNoRdma();
    try (ShuffleTransport t = TransportFactory.create(settings("auto"))) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void forcedVerbsFailsAtStartupWithTheReason() {
    assumeNoRdma();
    IOException e = assertThrows(IOException.class,
        () -> TransportFactory.create(settings("verbs")));
    assertTrue(e.getMessage().contains("RDMA verbs cannot start"), e.getMessage());
    assertTrue(e.getMessage().contains("no RDMA device"), e.getMessage());
    assertTrue(e.getMessage().contains("doctor"), e.getMessage());
  }
}
