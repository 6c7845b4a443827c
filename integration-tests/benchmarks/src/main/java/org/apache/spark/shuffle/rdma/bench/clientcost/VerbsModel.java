/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.spark.shuffle.rdma.bench.Charts;

/**
 * The arithmetic of docs/benchmarks.md's verbs model, from a measured reducer CPU cost per
 * READ: READs per second at 97% of line rate (RoCEv2 on 4 KiB MTU) per block size, the
 * reducer cores that takes, and the share of a ConnectX-6's 215 million messages per second.
 * Prints one {@code MODEL} line per row and draws the cores as a chart.
 *
 * <p>Usage: {@code VerbsModel <ns per READ> <chart.png>}.
 */
public final class VerbsModel {
  static final double GOODPUT = 0.97;
  static final double NIC_MESSAGES_PER_S = 215e6;
  static final int[] LINKS_GBPS = {100, 200, 400};
  static final int[] BLOCKS = {4096, 65536, 1048576};

  private VerbsModel() {}

  /** READs per second that fill {@code gbps} with blocks of {@code block} bytes. */
  static double readsPerSecond(int gbps, int block) {
    return gbps * 1e9 / 8 * GOODPUT / block;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: VerbsModel <ns per READ> <chart.png>");
      System.exit(2);
    }
    double ns = Double.parseDouble(args[0]);
    Path chart = Paths.get(args[1]);
    List<String> links = new ArrayList<>();
    for (int l : LINKS_GBPS) {
      links.add(l + " Gb/s");
    }
    List<String> sizes = new ArrayList<>();
    double[][] cores = new double[BLOCKS.length][LINKS_GBPS.length];
    for (int b = 0; b < BLOCKS.length; b++) {
      sizes.add(BLOCKS[b] >= 1 << 20 ? (BLOCKS[b] >> 20) + " MiB" : (BLOCKS[b] >> 10) + " KiB");
      for (int l = 0; l < LINKS_GBPS.length; l++) {
        double reads = readsPerSecond(LINKS_GBPS[l], BLOCKS[b]);
        cores[b][l] = reads * ns / 1e9;
        System.out.println(String.format(Locale.ROOT, "MODEL block=%d link_gbps=%d "
            + "reads_per_s=%.0f reducer_cores=%.3f nic_message_share=%.4f", BLOCKS[b],
            LINKS_GBPS[l], reads, cores[b][l], reads / NIC_MESSAGES_PER_S));
      }
    }
    Charts.bars(chart, String.format(Locale.ROOT, "Reducer cores to reach line rate at %.0f ns "
        + "per READ (model)", ns), "cores", links, sizes, cores, null, 1.0, false);
  }
}
