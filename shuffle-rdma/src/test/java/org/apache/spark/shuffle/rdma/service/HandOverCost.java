/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;

/**
 * What one hand-over costs (docs/node-service.md): the time from opening the files to the
 * descriptor back, over N map outputs handed to a service started by bin/shuffle-rdma-service;
 * the service's resident memory before and after; and, with strace on the PATH, the system
 * calls of both processes per hand-over (a second, traced pass: strace slows it down).
 * Not a unit test: run its main with the test class path (see the doc for the command).
 *   HandOverCost [outputs=2000] [partitions=200] [bytesPerPartition=1024]
 */
public final class HandOverCost {
  private HandOverCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int perPartition = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
    Path work = Files.createTempDirectory("handover-cost");
    Path socket = work.resolve("s.sock");
    int[] sizes = new int[partitions];
    Arrays.fill(sizes, perPartition);
    try (ServiceProcess service = ServiceProcess.start(work, socket, "--transport", "tcp",
            "--host", "127.0.0.1");
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      Path files = Files.createDirectories(work.resolve("files"));
      MapOutputFiles out = new MapOutputFiles(files, 0, 0, sizes, 1);
      // Warm-up (JIT, first mappings), released before measuring.
      run(client, out, "warm", 0, 500);
      client.releaseApp("warm");
      long rss0 = service.rssKib();
      long[] nanos = run(client, out, "app-a", 0, n);
      long rss1 = service.rssKib();
      Arrays.sort(nanos);
      System.out.printf("hand-over of %d outputs (%d partitions, %d bytes each, checksums): "
          + "mean %.1f us, p50 %.1f us, p99 %.1f us; service RSS %d MiB before, %d MiB "
          + "with them registered (%s)%n", n, partitions, out.bytes.length,
          Arrays.stream(nanos).average().orElse(0) / 1e3, nanos[n / 2] / 1e3,
          nanos[(int) (n * 0.99)] / 1e3, rss0 >> 10, rss1 >> 10, client.stats());
      client.releaseApp("app-a");
      System.out.printf("after release: service RSS %d MiB, %s%n", service.rssKib() >> 10,
          client.stats());
      if (!onPath("strace")) {
        System.out.println("strace not found: no system call counts");
        return;
      }
      Path serviceTrace = work.resolve("service.strace");
      Path clientTrace = work.resolve("client.strace");
      Process s1 = strace(service.pid, serviceTrace);
      Process s2 = strace(ProcessHandle.current().pid(), clientTrace);
      Thread.sleep(1500); // attached to every thread
      run(client, out, "app-b", 0, n);
      for (Process s : new Process[] {s1, s2}) {
        ProcessHandle.of(s.pid()).ifPresent(h -> {
          try {
            new ProcessBuilder("kill", "-INT", Long.toString(h.pid())).start().waitFor();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
        s.waitFor(30, TimeUnit.SECONDS);
      }
      System.out.println("system calls while handing over " + n + " outputs (strace -c -f; "
          + "includes each JVM's background threads):");
      System.out.println("--- service ---\n" + Files.readString(serviceTrace));
      System.out.println("--- executor side (this JVM) ---\n" + Files.readString(clientTrace));
      client.releaseApp("app-b");
    }
  }

  private static long[] run(HandOverClient client, MapOutputFiles out, String app, int shuffle,
      int n) throws Exception {
    long[] nanos = new long[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      HandOverAnswer a = client.handOver(app, shuffle, i, out.partitions(), out.data,
          out.index, out.checksums, ChecksumAlgorithm.CRC32);
      nanos[i] = System.nanoTime() - t0;
      if (a.isRefused()) {
        throw new IllegalStateException(a.refusal());
      }
    }
    return nanos;
  }

  private static Process strace(long pid, Path out) throws Exception {
    return new ProcessBuilder("strace", "-c", "-f", "-o", out.toString(), "-p",
        Long.toString(pid)).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv("PATH").split(":")) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }
}
