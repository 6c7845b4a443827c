/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

/**
 * Our native layer's RDMA-CM calls that DiSNI 2.1's Java API lacks (native/cm_private.c):
 * the private data and peer QP number of the last CONNECT_REQUEST or ESTABLISHED event, and
 * connect/accept with private data and explicit RDMA READ depths, reject, the READ depths of
 * the last event and the device's READ depth maxima, and the type of service of a cm id.
 * Used for connection authentication, READ depth negotiation ({@code ReadDepth}) and the
 * traffic class (spark.shuffle.rdma.verbs.trafficClass). Ids are
 * DiSNI's cm id handles ({@code NatCmaIdPrivate.getObjId()}).
 */
final class CmNative {
  static {
    // The isolated loader has loaded it already (NativeIdentity); this binds it to us too.
    System.loadLibrary("disni");
  }

  /** Longest private data of any RDMA-CM message. */
  static final int MAX_PRIVATE_DATA = 255;

  private CmNative() {}

  /**
   * Copies the private data of the last CONNECT_REQUEST or ESTABLISHED event this thread
   * fetched into {@code out}; returns its length (0 for other events or none).
   */
  static native int eventPrivateData(byte[] out);

  /** The QP number of the peer of the last CONNECT_REQUEST or ESTABLISHED event. */
  static native int eventQpNum();

  /**
   * The READ depths of the last CONNECT_REQUEST or ESTABLISHED event this thread fetched:
   * responder_resources in bits 0..7, initiator_depth in bits 8..15.
   */
  static native int eventReadDepths();

  /**
   * ibv_query_device of a context (DiSNI's IbvContext handle): max_qp_rd_atom in bits
   * 0..15, max_qp_init_rd_atom in bits 16..31, vendor_id above; -errno on failure.
   */
  static native long queryReadDepths(long context);

  /** Depths: a negative one passes librdmacm's RDMA_MAX_* (the device maximum). */
  static native void connect(long id, int retry, int rnrRetry, int initiatorDepth,
      int responderResources, byte[] privateData) throws IOException;

  static native void accept(long id, int retry, int rnrRetry, int initiatorDepth,
      int responderResources, byte[] privateData) throws IOException;

  /** Refuses a connection request; 0 or -errno. */
  static native int reject(long id);

  /**
   * rdma_set_option(RDMA_OPTION_ID_TOS): the IP type-of-service byte (0..255) of the id's
   * RoCE traffic. Before route resolution on an outbound id, before listen on a listening one.
   */
  static native void setTos(long id, int tos) throws IOException;
}
