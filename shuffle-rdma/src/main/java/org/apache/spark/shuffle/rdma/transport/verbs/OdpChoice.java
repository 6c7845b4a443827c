/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.Locale;

/**
 * Whether map outputs are registered with on-demand paging ({@code IBV_ACCESS_ON_DEMAND}):
 * the device then faults pages in as READs touch them and nothing is pinned, so the
 * mapping mode no longer decides what is held in memory. Needs the device to report ODP for
 * RC READ ({@code spark.shuffle.rdma.verbs.odp}). Pure; unit-tested.
 */
public final class OdpChoice {
  /** IBV_ODP_SUPPORT_READ in the per-transport (RC) capability bits. */
  public static final int RC_READ = 8;
  /** IBV_ACCESS_ON_DEMAND. */
  public static final int ACCESS_ON_DEMAND = 1 << 6;

  private OdpChoice() {}

  /** True when the RC capability bits (or -1: no ODP at all) include READ. */
  public static boolean readSupported(int rcCaps) {
    return rcCaps >= 0 && (rcCaps & RC_READ) != 0;
  }

  /**
   * @param setting auto, true or false
   * @param rcCaps the device's RC ODP capabilities, or -1 without ODP
   * @return whether to register with ODP
   * @throws IllegalArgumentException for true on a device without ODP for RC READ, naming
   *     the key (the transport then fails at startup)
   */
  public static boolean use(String setting, int rcCaps) {
    switch (setting.toLowerCase(Locale.ROOT)) {
      case "false":
        return false;
      case "auto":
        return readSupported(rcCaps);
      case "true":
        if (!readSupported(rcCaps)) {
          throw new IllegalArgumentException("spark.shuffle.rdma.verbs.odp=true, but the RDMA "
              + "device reports no on-demand paging for RC READ (capabilities "
              + (rcCaps < 0 ? "none" : "0x" + Integer.toHexString(rcCaps)) + "); set it to "
              + "auto or false");
        }
        return true;
      default:
        throw new IllegalArgumentException("spark.shuffle.rdma.verbs.odp must be auto, true or "
            + "false: " + setting);
    }
  }
}
