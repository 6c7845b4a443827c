/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

/**
 * The RDMA READ depth of one RC connection: how many READs the reader may have outstanding
 * on its queue pair. The connecting side (the reader) offers its device's
 * {@code max_qp_init_rd_atom} as {@code initiator_depth} and 0 responder resources (nobody
 * reads from it on that QP); the accepting side (the server) grants
 * {@code responder_resources} = the lesser of that offer and its device's
 * {@code max_qp_rd_atom}, and offers initiator depth 0. The reader keeps the lesser of its
 * offer and the grant, and posts at most that many READs (more wait in software): posting
 * beyond it makes some HCAs stall or fail the QP.
 *
 * <p>Figures are RDMA-CM's one-byte fields. A figure of 0 or less stands for "unknown"
 * (the device query failed, the peer stated none): the native layer then passes librdmacm's
 * RDMA_MAX_* and lets it clamp to the device, and the send queue bounds the reads.
 */
public final class ReadDepth {
  /** The conn param fields are one byte. */
  public static final int FIELD_MAX = 255;
  /** Passed to the native layer for "the device maximum, librdmacm decides". */
  public static final int DEVICE_MAX = -1;

  private ReadDepth() {}

  /** The device's READ depth maxima and vendor, as {@code ibv_query_device} reports them. */
  public static final class Device {
    /** READs one QP serves at once (responder side). */
    public final int maxQpRdAtom;
    /** READs one QP may have outstanding (initiator side). */
    public final int maxQpInitRdAtom;
    public final long vendorId;

    public Device(int maxQpRdAtom, int maxQpInitRdAtom, long vendorId) {
      this.maxQpRdAtom = maxQpRdAtom;
      this.maxQpInitRdAtom = maxQpInitRdAtom;
      this.vendorId = vendorId;
    }

    /** Decodes CmNative.queryReadDepths; a negative value (-errno) gives unknown figures. */
    public static Device decode(long packed) {
      if (packed < 0) {
        return new Device(0, 0, -1);
      }
      return new Device((int) (packed & 0xffff), (int) ((packed >>> 16) & 0xffff),
          packed >>> 32);
    }

    public boolean known() {
      return maxQpRdAtom > 0 && maxQpInitRdAtom > 0;
    }

    @Override
    public String toString() {
      return known() ? "max_qp_rd_atom " + maxQpRdAtom + ", max_qp_init_rd_atom "
          + maxQpInitRdAtom : "READ depth maxima unknown";
    }
  }

  /** The connecting side's initiator_depth: its device's max_qp_init_rd_atom. */
  public static int offer(Device local) {
    return local.maxQpInitRdAtom > 0 ? Math.min(local.maxQpInitRdAtom, FIELD_MAX) : DEVICE_MAX;
  }

  /**
   * The accepting side's responder_resources: what the reader asked for, at most this
   * device's max_qp_rd_atom. A request that states no depth gets the device maximum.
   */
  public static int grant(int requested, Device local) {
    if (local.maxQpRdAtom <= 0) {
      return DEVICE_MAX;
    }
    int max = Math.min(local.maxQpRdAtom, FIELD_MAX);
    return requested > 0 ? Math.min(requested, max) : max;
  }

  /**
   * The depth the reader keeps: the lesser of its offer and the server's grant; whichever is
   * unknown (0 or less) is left out; 0 when both are.
   */
  public static int negotiated(int offered, int granted) {
    if (offered <= 0) {
      return Math.max(granted, 0);
    }
    return granted > 0 ? Math.min(offered, granted) : offered;
  }

  /**
   * The peer's figure from a CONNECT_REQUEST or ESTABLISHED event's depths (responder
   * resources in bits 0..7, initiator depth in bits 8..15). Each side sends 0 for the
   * direction it does not use, so the other field is the figure, whether or not the kernel
   * reports the fields from the receiver's point of view (the IB CM swaps them).
   */
  public static int peerFigure(int eventDepths) {
    return Math.max(eventDepths & 0xff, (eventDepths >>> 8) & 0xff);
  }

  /** READs one QP keeps posted: the negotiated depth, at most the send queue. */
  public static int window(int sendQueueDepth, int negotiated) {
    return negotiated > 0 ? Math.min(sendQueueDepth, negotiated) : sendQueueDepth;
  }
}
