/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

/**
 * The private data, the peer's QP number and the RDMA READ depths (as CmNative's
 * eventReadDepths packs them) of a CONNECT_REQUEST or ESTABLISHED event.
 */
final class CmConnectData {
  final byte[] privateData;
  final int length;
  final int peerQpNum;
  final int readDepths;

  CmConnectData(byte[] privateData, int length, int peerQpNum, int readDepths) {
    this.privateData = privateData;
    this.length = length;
    this.peerQpNum = peerQpNum;
    this.readDepths = readDepths;
  }

  /** Reads what the native layer kept of the event the calling thread just fetched. */
  static CmConnectData ofLastEvent() {
    byte[] data = new byte[CmNative.MAX_PRIVATE_DATA];
    int n = CmNative.eventPrivateData(data);
    return new CmConnectData(data, n, CmNative.eventQpNum(), CmNative.eventReadDepths());
  }
}
