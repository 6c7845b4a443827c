/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;

/**
 * What keeping outputs across a restart costs (docs/node-service.md, Restart): N outputs
 * handed over to a service started by bin/shuffle-rdma-service (each linked and journaled),
 * the service SIGKILLed and started again with the same command line; prints the hand-over
 * time and the time to the ready line (the service logs its own restore time). Not a unit test: run
 * its main with the test class path, as HandOverCost.
 *   RestartCost [outputs=1000] [partitions=200] [bytesPerPartition=1024] [none]
 * With "none" the service runs with --state-dir none: the hand-over time without keeping.
 */
public final class RestartCost {
  private RestartCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int perPartition = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
    Path work = Files.createTempDirectory("restart-cost");
    Path socket = work.resolve("s.sock");
    int[] sizes = new int[partitions];
    Arrays.fill(sizes, perPartition);
    boolean keep = !(args.length > 3 && args[3].equals("none"));
    String[] serviceArgs = keep ? new String[] {"--transport", "tcp", "--host", "127.0.0.1"}
        : new String[] {"--transport", "tcp", "--host", "127.0.0.1", "--state-dir", "none"};
    ServiceProcess service = ServiceProcess.start(work, socket, serviceArgs);
    try {
      MapOutputFiles out = new MapOutputFiles(Files.createDirectories(work.resolve("files")),
          0, 0, sizes, 1);
      long t0 = System.nanoTime();
      try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        for (int i = 0; i < n; i++) {
          HandOverAnswer a = client.handOver("app-a", 0, i, out.partitions(), out.data,
              out.index, out.checksums, ChecksumAlgorithm.CRC32);
          if (a.isRefused()) {
            throw new IllegalStateException(a.refusal());
          }
        }
      }
      double perHandOverMs = (System.nanoTime() - t0) / 1e6 / n;
      if (!keep) {
        System.out.printf("%d outputs handed over without keeping them: %.2f ms per "
            + "hand-over%n", n, perHandOverMs);
        return;
      }
      service.kill();
      long t1 = System.nanoTime();
      service = ServiceProcess.start(work, socket, serviceArgs);
      long readyMs = (System.nanoTime() - t1) / 1_000_000;
      try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        System.out.printf("%d outputs (3 files each) kept: %.2f ms per hand-over (link, "
            + "fsync, journal); SIGKILL, then the same command line: ready in %d ms (JVM "
            + "start included; the service's own restore time is its '[service] state ... "
            + "outputs served again in' line above); %s%n", n, perHandOverMs, readyMs,
            client.stats());
        client.releaseApp("app-a");
      }
    } finally {
      service.kill();
    }
  }
}
