/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Random;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.junit.jupiter.api.Test;

class ReadDepthTest {
  private static final ReadDepth.Device CONNECTX = new ReadDepth.Device(16, 16, 0x02c9);
  private static final ReadDepth.Device RXE = new ReadDepth.Device(128, 128, 0xFFFFFF);
  private static final ReadDepth.Device SMALL = new ReadDepth.Device(4, 8, 0x1234);
  private static final ReadDepth.Device UNKNOWN = ReadDepth.Device.decode(-95);

  @Test
  void decodesTheNativeQuery() {
    long packed = 16L | (32L << 16) | (0x02c9L << 32);
    ReadDepth.Device d = ReadDepth.Device.decode(packed);
    assertEquals(16, d.maxQpRdAtom);
    assertEquals(32, d.maxQpInitRdAtom);
    assertEquals(0x02c9, d.vendorId);
    assertTrue(d.known());
    assertEquals(0xFFFFFFL, ReadDepth.Device.decode(128L | (128L << 16) | (0xFFFFFFL << 32))
        .vendorId);
    assertFalse(UNKNOWN.known(), "a failed query (-errno) gives unknown figures");
  }

  @Test
  void bothSidesNegotiateTheLesserOfTheirDeviceFigures() {
    // Reader on ConnectX (init 16) to a server on a device that serves 4 at once.
    int offered = ReadDepth.offer(CONNECTX);
    assertEquals(16, offered);
    int granted = ReadDepth.grant(offered, SMALL);
    assertEquals(4, granted, "the server grants at most its max_qp_rd_atom");
    assertEquals(4, ReadDepth.negotiated(offered, granted));
    // Reader on the small device (init 8) to a ConnectX server (serves 16).
    offered = ReadDepth.offer(SMALL);
    assertEquals(8, offered, "the reader offers its max_qp_init_rd_atom, not max_qp_rd_atom");
    granted = ReadDepth.grant(offered, CONNECTX);
    assertEquals(8, granted, "never more than was asked for");
    assertEquals(8, ReadDepth.negotiated(offered, granted));
    // rxe to rxe.
    assertEquals(128, ReadDepth.negotiated(ReadDepth.offer(RXE),
        ReadDepth.grant(ReadDepth.offer(RXE), RXE)));
    // A granted figure larger than the offer (a misbehaving peer) does not raise it.
    assertEquals(16, ReadDepth.negotiated(16, 64));
  }

  @Test
  void theOneByteFieldCapsLargeDeviceFigures() {
    ReadDepth.Device huge = new ReadDepth.Device(4096, 4096, 1);
    assertEquals(255, ReadDepth.offer(huge));
    assertEquals(255, ReadDepth.grant(1000, huge));
  }

  @Test
  void unknownFiguresLeaveItToLibrdmacmAndTheSendQueue() {
    assertEquals(ReadDepth.DEVICE_MAX, ReadDepth.offer(UNKNOWN));
    assertEquals(ReadDepth.DEVICE_MAX, ReadDepth.grant(16, UNKNOWN));
    assertEquals(16, ReadDepth.grant(0, CONNECTX), "a request without a depth gets the max");
    assertEquals(16, ReadDepth.negotiated(ReadDepth.DEVICE_MAX, 16));
    assertEquals(16, ReadDepth.negotiated(16, 0));
    assertEquals(0, ReadDepth.negotiated(ReadDepth.DEVICE_MAX, 0));
    assertEquals(256, ReadDepth.window(256, 0));
  }

  @Test
  void thePeersFigureIsReadFromEitherEventField() {
    // The reader sends responder_resources 0, the server initiator_depth 0: the other field
    // carries the figure whichever way the kernel reports them.
    assertEquals(16, ReadDepth.peerFigure(16));
    assertEquals(16, ReadDepth.peerFigure(16 << 8));
    assertEquals(0, ReadDepth.peerFigure(0));
    assertEquals(255, ReadDepth.peerFigure(0xffff));
  }

  @Test
  void theWindowIsTheNegotiatedDepthAtMostTheSendQueue() {
    assertEquals(16, ReadDepth.window(256, 16));
    assertEquals(8, ReadDepth.window(8, 16));
  }

  /**
   * The channel's posting rule, run against a random completion stream: reads are posted
   * while a slot of a table sized {@link ReadDepth#window} is free, completions free slots,
   * the rest wait. Never more than the negotiated depth in flight; every read is posted.
   */
  @Test
  void neverMoreReadsOutstandingThanTheNegotiatedDepth() {
    int negotiated = ReadDepth.negotiated(ReadDepth.offer(CONNECTX),
        ReadDepth.grant(ReadDepth.offer(CONNECTX), CONNECTX));
    SlotTable slots = new SlotTable(ReadDepth.window(256, negotiated));
    ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
    ArrayDeque<Integer> posted = new ArrayDeque<>();
    Random rnd = new Random(3);
    int total = 2000;
    int done = 0;
    int maxSeen = 0;
    ReadCallback ignore = new ReadCallback() {
      @Override
      public void onSuccess(ReadRequest request, ManagedBuffer data) {}

      @Override
      public void onFailure(ReadRequest request, Throwable cause) {}
    };
    for (int i = 0; i < total; i++) {
      waiting.add(new ReadRequest(i * 4096L, 1, 4096, ignore, null));
    }
    while (done < total) {
      while (!waiting.isEmpty() && slots.hasFree()) {
        posted.add(slots.take(waiting.poll(), 0, 0));
      }
      maxSeen = Math.max(maxSeen, slots.inFlight());
      assertTrue(slots.inFlight() <= negotiated, slots.inFlight() + " READs outstanding");
      int completions = 1 + rnd.nextInt(posted.size());
      for (int c = 0; c < completions; c++) {
        slots.release(posted.poll());
        done++;
      }
    }
    assertEquals(16, maxSeen, "the window fills up to the depth");
    assertTrue(waiting.isEmpty());
  }
}
