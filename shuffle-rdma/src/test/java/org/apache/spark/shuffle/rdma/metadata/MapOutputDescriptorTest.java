/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.junit.jupiter.api.Test;

class MapOutputDescriptorTest {

  private static MapOutputDescriptor sample(long mapId, long dataLength) {
    long region = 1L << 30;
    int n = (int) ((dataLength + region - 1) / region);
    long[] addrs = new long[n];
    int[] keys = new int[n];
    for (int i = 0; i < n; i++) {
      addrs[i] = 0x7f0000000000L + i * region;
      keys[i] = 0x1234 + i;
    }
    return new MapOutputDescriptor(3, mapId, "exec-7", 2000, 0x7f1000000000L, 0xabcdef,
        dataLength, region, addrs, keys);
  }

  @Test
  void roundTripsThroughTheTable() {
    DescriptorLog log = new DescriptorLog();
    for (int i = 0; i < 50; i++) {
      log.append(DescriptorCodec.publishedRecord(3, 1000 + i,
          DescriptorCodec.encodeEntry(sample(1000 + i, i * 100_000_000L))));
    }
    Map<Long, MapOutputDescriptor> back = new HashMap<>();
    assertEquals(50, DescriptorCodec.apply(log.since(0).chunks, back));
    assertEquals(50, back.size());
    for (int i = 0; i < 50; i++) {
      MapOutputDescriptor expected = sample(1000 + i, i * 100_000_000L);
      MapOutputDescriptor d = back.get(1000L + i);
      assertEquals(expected.mapId(), d.mapId());
      assertEquals("exec-7", d.executorId());
      assertEquals(2000, d.numPartitions());
      assertEquals(expected.dataLength(), d.dataLength());
      assertEquals(expected.dataRegionCount(), d.dataRegionCount());
      assertEquals(0xabcdef, d.indexKey());
      for (int r = 0; r < d.dataRegionCount(); r++) {
        assertEquals(expected.dataAddress(r), d.dataAddress(r));
        assertEquals(expected.dataKey(r), d.dataKey(r));
      }
      assertArrayEquals(DescriptorCodec.encodeEntry(expected), DescriptorCodec.encodeEntry(d));
    }
  }

  @Test
  void sizeIsIndependentOfPartitions() {
    // 2000 partitions, 1 region: the descriptor stays a few dozen bytes.
    assertEquals(true, DescriptorCodec.encodeEntry(sample(1, 5000)).length < 80);
  }

  @Test
  void checksumRegionRoundTripsAndCostsTwelveBytes() {
    MapOutputDescriptor plain = sample(9, 5000);
    MapOutputDescriptor summed = new MapOutputDescriptor(3, 9, "exec-7", 2000, 0x7f1000000000L,
        0xabcdef, 5000, 1L << 30, new long[] {0x7f0000000000L}, new int[] {0x1234},
        ChecksumAlgorithm.CRC32C, 0x7f2000000000L, 0x4321);
    byte[] entry = DescriptorCodec.encodeEntry(summed);
    assertEquals(DescriptorCodec.encodeEntry(plain).length + 12, entry.length);
    DescriptorLog log = new DescriptorLog();
    log.append(DescriptorCodec.publishedRecord(3, 9, entry));
    Map<Long, MapOutputDescriptor> back = new HashMap<>();
    DescriptorCodec.apply(log.since(0).chunks, back);
    MapOutputDescriptor d = back.get(9L);
    assertEquals(ChecksumAlgorithm.CRC32C, d.checksumAlgorithm());
    assertEquals(0x7f2000000000L, d.checksumAddress());
    assertEquals(0x4321, d.checksumKey());
    assertEquals(ChecksumAlgorithm.NONE, plain.checksumAlgorithm());
  }

  @Test
  void regionCountMustMatchDataLength() {
    assertThrows(IllegalArgumentException.class, () -> new MapOutputDescriptor(0, 1, "e", 4,
        0, 1, 3L << 30, 1L << 30, new long[] {1, 2}, new int[] {1, 2}));
  }

  @Test
  void indexEntryAddressIsBounded() {
    MapOutputDescriptor d = sample(1, 10);
    assertEquals(0x7f1000000000L + 8 * 2000, d.indexEntryAddress(2000));
    assertThrows(IndexOutOfBoundsException.class, () -> d.indexEntryAddress(2001));
  }

  @Test
  void corruptTableIsRejected() {
    byte[] bytes = DescriptorCodec.publishedRecord(3, 1,
        DescriptorCodec.encodeEntry(sample(1, 10)));
    byte[] truncated = java.util.Arrays.copyOf(bytes, bytes.length - 5);
    assertThrows(java.io.UncheckedIOException.class,
        () -> DescriptorCodec.apply(new byte[][] {truncated}, new HashMap<>()));
  }

  @Test
  void malformedOrMislabelledEntryIsRefusedAtPublish() {
    byte[] entry = DescriptorCodec.encodeEntry(sample(1, 10));
    assertThrows(java.io.UncheckedIOException.class, () -> DescriptorCodec.publishedRecord(3, 1,
        java.util.Arrays.copyOf(entry, entry.length - 1)));
    assertThrows(java.io.UncheckedIOException.class, () -> DescriptorCodec.publishedRecord(3, 1,
        java.util.Arrays.copyOf(entry, entry.length + 1)));
    assertThrows(IllegalArgumentException.class,
        () -> DescriptorCodec.publishedRecord(3, 2, entry));
  }

  /** A descriptor's header as the wire carries it, then {@code regions} as its region count. */
  private static byte[] header(int partitions, long dataLength, long regionSize, int regions)
      throws java.io.IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
    out.writeInt(3);
    out.writeLong(1);
    out.writeUTF("exec-7");
    out.writeInt(partitions);
    out.writeLong(0x7f1000000000L);
    out.writeInt(0xabcdef);
    out.writeLong(dataLength);
    out.writeLong(regionSize);
    out.writeInt(regions);
    return bytes.toByteArray();
  }

  private static MapOutputDescriptor read(byte[] bytes) throws java.io.IOException {
    return MapOutputDescriptor.readFrom(
        new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes)));
  }

  @Test
  void declaredRegionCountIsCheckedAgainstTheBytesPresent() throws Exception {
    // 2^20 regions declared (consistent with 1 MiB in regions of 1 byte), none present: the
    // reader must fail on the missing bytes, not first allocate 12 MiB for them.
    byte[] lying = header(4, 1 << 20, 1, 1 << 20);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    assertThrows(java.io.EOFException.class, () -> read(lying)); // warm up
    long before = threads.getThreadAllocatedBytes(tid);
    assertThrows(java.io.EOFException.class, () -> read(lying));
    long allocated = threads.getThreadAllocatedBytes(tid) - before;
    assertTrue(allocated < 256 << 10, allocated + " bytes allocated for a 59-byte input");
    // Counts that disagree with the sizes, and sizes that cannot be, are corrupt.
    for (byte[] bad : new byte[][] {header(4, 100, 1L << 30, 3), header(4, 100, 0, 1),
        header(4, -1, 1L << 30, 0), header(-1, 100, 1L << 30, 1)}) {
      java.io.IOException e = assertThrows(java.io.IOException.class, () -> read(bad));
      assertTrue(e.getMessage().startsWith("corrupt descriptor"), e.getMessage());
    }
    assertThrows(java.io.UncheckedIOException.class,
        () -> DescriptorCodec.publishedRecord(3, 1, lying));
  }
}
