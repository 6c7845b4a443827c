/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

/**
 * Our native layer's RDMA-CM calls that DiSNI 2.1's Java API lacks (native/cm_private.c):
 * the private data and peer QP number of the last CONNECT_REQUEST or ESTABLISHED event, and
 * connect/accept with private data, reject. Used for connection authentication. Ids are
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

  static native void connect(long id, int retry, int rnrRetry, byte[] privateData)
      throws IOException;

  static native void accept(long id, int retry, int rnrRetry, byte[] privateData)
      throws IOException;

  /** Refuses a connection request; 0 or -errno. */
  static native int reject(long id);
}
