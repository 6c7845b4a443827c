/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.Locale;

/**
 * How many RC queue pairs one executor opens to a peer
 * (spark.shuffle.rdma.verbs.queuePairsPerPeer) and which of them a read goes to. One QP
 * keeps at most its READ depth outstanding (16 on ConnectX), which fills a fast link only
 * with large reads; small reads need several QPs. Software devices (rxe, siw) gain nothing
 * from more: they get one.
 */
public final class QueuePairStriping {
  /** Queue pairs per peer on a hardware device when the key is 0. */
  public static final int HARDWARE_DEFAULT = 4;
  public static final int MAX = 16;
  /** rdma_rxe's vendor_id (RXE_VENDOR_ID) and siw's (SIW_VENDOR_ID, "bmt"). */
  static final long RXE_VENDOR = 0xFFFFFFL;
  static final long SIW_VENDOR = 0x626d74L;

  private QueuePairStriping() {}

  /** The queue pairs per peer: the configured count, or for 0 the device's default. */
  public static int perPeer(int configured, String deviceName, long vendorId) {
    if (configured < 0 || configured > MAX) {
      throw new IllegalArgumentException("spark.shuffle.rdma.verbs.queuePairsPerPeer must be "
          + "in [0, " + MAX + "]: " + configured);
    }
    if (configured > 0) {
      return configured;
    }
    return softwareDevice(deviceName, vendorId) ? 1 : HARDWARE_DEFAULT;
  }

  /** Soft-RoCE (rxe) and soft-iWARP (siw), by name or vendor id. */
  public static boolean softwareDevice(String deviceName, long vendorId) {
    String n = deviceName == null ? "" : deviceName.toLowerCase(Locale.ROOT);
    return n.startsWith("rxe") || n.startsWith("siw") || vendorId == RXE_VENDOR
        || vendorId == SIW_VENDOR;
  }

  /** The queue pairs of one peer, as the chooser sees them. */
  public interface Lanes {
    int lanes();

    /** Reads queued or posted on this lane; Integer.MAX_VALUE when it takes none now. */
    int load(int lane);
  }

  /**
   * The lane with the fewest reads outstanding; among equals the first at or after
   * {@code start} (so callers rotate {@code start} for round robin). Allocates nothing.
   */
  public static int leastLoaded(Lanes lanes, int start) {
    int n = lanes.lanes();
    int first = Math.floorMod(start, n);
    int best = first;
    int bestLoad = lanes.load(best);
    for (int i = 1; i < n; i++) {
      int lane = (first + i) % n;
      int load = lanes.load(lane);
      if (load < bestLoad) {
        best = lane;
        bestLoad = load;
      }
    }
    return best;
  }

  /**
   * Reads per sub-batch when a batch of {@code batchSize} is spread over {@code lanes}: the
   * batch is cut into at most that many consecutive runs of equal size (the last shorter),
   * each posted on one lane with one doorbell.
   */
  public static int runLength(int batchSize, int lanes) {
    return Math.max(1, (batchSize + lanes - 1) / lanes);
  }
}
