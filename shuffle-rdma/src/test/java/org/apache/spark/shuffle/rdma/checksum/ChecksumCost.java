/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.checksum;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.Checksum;

/**
 * What spark.shuffle.rdma.verifyChecksums costs the reducer: CPU seconds per GB of blocks
 * verified, per algorithm and block size, through the reader's own verifier, on direct
 * buffers (what the transports hand over: Netty's and the verbs receive pool) and heap
 * buffers (blocks assembled from pieces). Measured as this thread's CPU time, so the figure
 * does not grow with the machine's load the way wall time does. JMH-free on purpose: it runs
 * where the tests run, in a few seconds per case.
 *
 * <p>Args: [GB per case, default 2] [block sizes in bytes, comma separated, default
 * 4096,65536,1048576]. Run by {@code integration-tests/checksum-cost}.
 */
public final class ChecksumCost {
  private static final int BUFFER = 64 << 20;

  private ChecksumCost() {}

  public static void main(String[] args) {
    double gb = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
    String sizes = args.length > 1 ? args[1] : "4096,65536,1048576";
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    byte[] bytes = new byte[BUFFER];
    new Random(42).nextBytes(bytes);
    ByteBuffer direct = ByteBuffer.allocateDirect(BUFFER);
    direct.put(bytes).flip();
    ByteBuffer heap = ByteBuffer.wrap(bytes);
    System.out.printf("load average before: %.2f%n",
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    System.out.println("| algorithm | block | buffer | CPU s per GB | GB/s per core |");
    System.out.println("|---|---|---|---|---|");
    for (ChecksumAlgorithm a : new ChecksumAlgorithm[] {ChecksumAlgorithm.ADLER32,
        ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C}) {
      for (String s : sizes.split(",")) {
        int block = Integer.parseInt(s.trim());
        for (ByteBuffer b : new ByteBuffer[] {direct, heap}) {
          long[] offsets = offsets(block);
          long[] sums = checksums(a, bytes, offsets);
          verify(a, b, offsets, sums, (long) (0.25 * (1L << 30))); // warm-up
          long cpu0 = threads.getCurrentThreadCpuTime();
          long done = verify(a, b, offsets, sums, (long) (gb * (1L << 30)));
          double cpu = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9;
          double perGb = cpu / (done / (double) (1L << 30));
          System.out.printf("| %s | %d | %s | %.3f | %.2f |%n", a, block,
              b.isDirect() ? "direct" : "heap", perGb, 1 / perGb);
        }
      }
    }
    System.out.printf("load average after: %.2f%n",
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /** The buffer cut into partitions of {@code block} bytes (one block = one partition). */
  private static long[] offsets(int block) {
    int n = BUFFER / block;
    long[] o = new long[n + 1];
    for (int i = 0; i <= n; i++) {
      o[i] = (long) i * block;
    }
    return o;
  }

  private static long[] checksums(ChecksumAlgorithm a, byte[] bytes, long[] offsets) {
    long[] sums = new long[offsets.length - 1];
    for (int i = 0; i < sums.length; i++) {
      Checksum c = a.create();
      c.update(bytes, (int) offsets[i], (int) (offsets[i + 1] - offsets[i]));
      sums[i] = c.getValue();
    }
    return sums;
  }

  /** Verifies blocks one by one, as the reader does, until {@code total} bytes; returns them. */
  private static long verify(ChecksumAlgorithm a, ByteBuffer b, long[] offsets, long[] sums,
      long total) {
    long done = 0;
    while (done < total) {
      for (int p = 0; p + 1 < offsets.length && done < total; p++) {
        PartitionVerifier v = new PartitionVerifier(offsets, sums, a, p, p + 1);
        ByteBuffer block = b.duplicate();
        block.limit((int) offsets[p + 1]).position((int) offsets[p]);
        v.update(block);
        if (v.finish() != null) {
          throw new IllegalStateException("mismatch in partition " + p);
        }
        done += v.bytes();
      }
    }
    return done;
  }
}
