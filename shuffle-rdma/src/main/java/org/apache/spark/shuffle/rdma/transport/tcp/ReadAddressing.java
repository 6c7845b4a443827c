/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

/**
 * How a single one-sided read travels inside network-common's ChunkFetchRequest (which the
 * server still answers; the plugin's client sends batches, see {@link ReadBatch}): the 64-bit
 * stream id carries (key, address) and the chunk index carries the length. Regions are at most
 * 1 GiB and start at address 0 on tcp, so an address always fits in 32 bits.
 */
final class ReadAddressing {
  static final long MAX_ADDRESS = 0xFFFFFFFFL;

  private ReadAddressing() {}

  static long streamId(int key, long address) {
    if (address < 0 || address > MAX_ADDRESS) {
      throw new IllegalArgumentException("tcp read address out of range: " + address);
    }
    return ((long) key << 32) | address;
  }

  static int key(long streamId) {
    return (int) (streamId >>> 32);
  }

  static long address(long streamId) {
    return streamId & MAX_ADDRESS;
  }
}
