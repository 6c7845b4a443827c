/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

class DescriptorLogTest {

  private static MapOutputDescriptor descriptor(long mapId, String executor) {
    return new MapOutputDescriptor(5, mapId, executor, 100, 0x7f0000000000L + mapId * 4096,
        (int) mapId, 10, 1L << 30, new long[] {0x7e0000000000L + mapId}, new int[] {7});
  }

  private static byte[] record(long mapId) {
    return DescriptorCodec.publishedRecord(5, mapId,
        DescriptorCodec.encodeEntry(descriptor(mapId, "exec-" + (mapId % 13))));
  }

  private static byte[] concat(byte[][] chunks) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] c : chunks) {
      out.writeBytes(c);
    }
    return out.toByteArray();
  }

  @Test
  void chunksConcatenateToTheLogAcrossChunkBoundaries() {
    DescriptorLog log = new DescriptorLog();
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    int n = 3 * DescriptorLog.CHUNK_BYTES / 50; // records straddle at least two boundaries
    for (long m = 0; m < n; m++) {
      byte[] r = record(m);
      log.append(r);
      expected.writeBytes(r);
    }
    assertEquals(expected.size(), log.length());
    DescriptorLog.Slice all = log.since(0);
    assertTrue(all.chunks.length >= 3, all.chunks.length + " chunks");
    assertArrayEquals(expected.toByteArray(), concat(all.chunks));
    Map<Long, MapOutputDescriptor> view = new HashMap<>();
    assertEquals(n, DescriptorCodec.apply(all.chunks, view));
    assertEquals("exec-" + (n - 1) % 13, view.get((long) n - 1).executorId());
    // Full chunks are shared between replies, not copied per reply.
    assertSame(all.chunks[0], log.since(0).chunks[0]);
  }

  @Test
  void sinceAVersionCarriesOnlyTheRecordsAppendedAfterIt() {
    DescriptorLog log = new DescriptorLog();
    Map<Long, MapOutputDescriptor> view = new HashMap<>();
    long version = 0;
    long m = 0;
    for (int round = 0; round < 40; round++) {
      int batch = round * 97 % 700 + 1;
      for (int i = 0; i < batch; i++) {
        log.append(record(m++));
      }
      if (round % 7 == 3) {
        log.append(DescriptorCodec.releasedRecord(m - 1));
      }
      DescriptorLog.Slice s = log.since(version);
      assertEquals(version, s.from);
      assertEquals(log.length() - version, s.bytes());
      DescriptorCodec.apply(s.chunks, view);
      version = s.to;
    }
    DescriptorLog.Slice nothing = log.since(version);
    assertEquals(0, nothing.bytes());
    Map<Long, MapOutputDescriptor> whole = new HashMap<>();
    DescriptorCodec.apply(log.since(0).chunks, whole);
    assertEquals(whole.keySet(), view.keySet());
    assertTrue(view.size() < m, "released records removed entries");
  }

  @Test
  void aVersionBeyondTheLogIsAnsweredFromTheStart() {
    DescriptorLog log = new DescriptorLog();
    log.append(record(1));
    DescriptorLog.Slice s = log.since(1 << 20);
    assertEquals(0, s.from);
    assertEquals(log.length(), s.bytes());
  }
}
