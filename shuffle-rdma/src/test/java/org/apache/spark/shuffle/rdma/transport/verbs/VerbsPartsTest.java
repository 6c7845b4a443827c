/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.junit.jupiter.api.Test;

/** The device-independent pieces of the verbs transport. */
class VerbsPartsTest {

  @Test
  void onlyThePeersOwnRefusalsAreRefusals() {
    // The reader retries every failed READ but these: the responder's NIC answered no.
    for (int refusal : new int[] {WcStatus.REM_ACCESS_ERR, 9, 15}) {
      assertTrue(WcStatus.isRefusal(refusal), WcStatus.name(refusal));
    }
    // Transport trouble (a blip, a dead peer, a flushed queue pair) is worth another try.
    for (int blip : new int[] {WcStatus.SUCCESS, WcStatus.WR_FLUSH_ERR, 12, 13, 20, 21}) {
      assertFalse(WcStatus.isRefusal(blip), WcStatus.name(blip));
    }
  }

  @Test
  void buddyAllocatorSplitsMergesAndRefusesWhenFull() {
    BuddyAllocator a = new BuddyAllocator(1 << 20);
    assertEquals(1 << 20, a.freeBytes());
    long x = a.allocate(1);          // one page
    long y = a.allocate(5000);       // two pages
    long z = a.allocate(1 << 19);    // half the arena
    assertTrue(x >= 0 && y >= 0 && z >= 0);
    assertEquals(0, x % BuddyAllocator.MIN_BLOCK);
    assertEquals(-1, a.allocate(1 << 19), "the other half is split");
    assertFalse(a.fits((1 << 20) + 1));
    a.free(x);
    a.free(y);
    assertEquals(1 << 19, a.allocate(1 << 19) == -1 ? 0 : 1 << 19);
    assertThrows(IllegalArgumentException.class, () -> a.free(12345));
    assertEquals(1 << 27, BuddyAllocator.arenaSizeFor(200L << 20));
  }

  @Test
  void buddyAllocatorRandomizedNeverOverlapsAndFullyMerges() {
    BuddyAllocator a = new BuddyAllocator(1 << 22);
    Random rnd = new Random(42);
    List<long[]> live = new ArrayList<>();
    for (int i = 0; i < 20000; i++) {
      if (live.isEmpty() || rnd.nextInt(3) > 0) {
        int len = 1 + rnd.nextInt(100_000);
        long off = a.allocate(len);
        if (off >= 0) {
          for (long[] o : live) {
            assertTrue(off + len <= o[0] || o[0] + o[1] <= off, "overlap");
          }
          live.add(new long[] {off, len});
        }
      } else {
        a.free(live.remove(rnd.nextInt(live.size()))[0]);
      }
    }
    for (long[] o : live) {
      a.free(o[0]);
    }
    assertEquals(1 << 22, a.freeBytes());
    assertEquals(0, a.allocate(1 << 22), "everything merged back into one block");
  }

  @Test
  void slotTableBoundsReadsInFlight() {
    SlotTable t = new SlotTable(2);
    ReadRequest r = new ReadRequest(0, 1, 8, new Nop(), null);
    int s0 = t.take(r, 0, 100);
    int s1 = t.take(r, 4096, 50);
    assertFalse(t.hasFree());
    assertEquals(2, t.inFlight());
    assertEquals(50, t.oldestPostNanos());
    assertEquals(4096, t.offset(s1));
    t.release(s0);
    assertEquals(r, t.request(s1));
    assertEquals(null, t.request(s0));
    assertEquals(null, t.request(99), "a bogus work request id finds nothing");
    assertThrows(IllegalStateException.class, () -> t.release(s0));
  }

  @Test
  void pooledBufferRecyclesOnLastRelease() throws Exception {
    List<Long> recycled = new ArrayList<>();
    ByteBuffer bytes = ByteBuffer.allocateDirect(16);
    bytes.put(0, (byte) 7);
    PooledManagedBuffer b = new PooledManagedBuffer(bytes, 4096, recycled::add);
    assertEquals(16, b.size());
    assertEquals(7, b.nioByteBuffer().get(0));
    assertEquals(7, b.createInputStream().read());
    ManagedBuffer kept = b.retain();
    b.release();
    assertTrue(recycled.isEmpty(), "still retained");
    kept.release();
    assertEquals(List.of(4096L), recycled);
    assertThrows(IllegalStateException.class, b::retain);
    assertThrows(IllegalStateException.class, b::nioByteBuffer);
  }

  @Test
  void statusNamesForFailures() {
    assertEquals("IBV_WC_REM_ACCESS_ERR", WcStatus.name(10));
    assertTrue(WcStatus.describe(10).contains("rkey"));
    assertEquals("IBV_WC_WR_FLUSH_ERR", WcStatus.name(WcStatus.WR_FLUSH_ERR));
    assertEquals("IBV_WC_STATUS_99", WcStatus.name(99));
  }

  private static final class Nop implements ReadCallback {
    @Override
    public void onSuccess(ReadRequest request, ManagedBuffer data) {}

    @Override
    public void onFailure(ReadRequest request, Throwable cause) {}
  }
}
