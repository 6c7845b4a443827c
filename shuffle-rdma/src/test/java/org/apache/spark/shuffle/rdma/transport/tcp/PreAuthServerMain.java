/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;

/**
 * A tcp transport server with spark.authenticate in a JVM of its own (small heap), for
 * TcpPreAuthAllocationTest: two servers, SASL and auth engine. Prints
 * {@code READY <sasl port> <engine port>}, then answers each {@code REPORT} line on stdin
 * with {@code HEAP <peak heap bytes since the last RESET> SERVED <bytes served>} and each
 * {@code RESET} (after a GC) with {@code OK}.
 */
public final class PreAuthServerMain {
  private PreAuthServerMain() {}

  public static void main(String[] args) throws Exception {
    File dir = Files.createTempDirectory("preauth").toFile();
    TcpTransport sasl = TcpTestSupport.transport(new SparkConf(false), "s3cret");
    TcpTransport engine = TcpTestSupport.transport(
        new SparkConf(false).set("spark.network.crypto.enabled", "true"), "s3cret");
    RegisteredRegion a = sasl.register(TestFiles.mapFile(dir, TestFiles.randomBytes(4096, 1)));
    RegisteredRegion b = engine.register(TestFiles.mapFile(dir, TestFiles.randomBytes(4096, 2)));
    System.out.println("READY " + sasl.localAddress().port() + " " + engine.localAddress().port()
        + " " + a.key() + " " + b.key());
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.equals("RESET")) {
        System.gc();
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
          p.resetPeakUsage();
        }
        System.out.println("OK");
      } else if (line.equals("REPORT")) {
        long peak = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
          if (p.getType() == MemoryType.HEAP && p.getPeakUsage() != null) {
            peak += p.getPeakUsage().getUsed();
          }
        }
        System.out.println("HEAP " + peak + " SERVED " + (sasl.stats().bytesServed.get()
            + engine.stats().bytesServed.get()) + " REFUSED "
            + (sasl.guard().framesRefused.get() + engine.guard().framesRefused.get()));
      }
      System.out.flush();
    }
    sasl.close();
    engine.close();
  }
}
