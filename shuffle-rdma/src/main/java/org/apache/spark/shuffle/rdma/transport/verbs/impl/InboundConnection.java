/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;

/**
 * The serving side of a peer's connection. It does no work per read (the NIC answers RDMA
 * READs from registered memory without the CPU); it only exists so the QP lives until the
 * peer disconnects, then it is torn down on the CM thread.
 */
final class InboundConnection implements CmHandler {
  private final VerbsAcceptor acceptor;
  final RdmaCmId id;
  final IbvCQ cq;
  /** The peer's address as RDMA-CM reported it: whose inbound slot this holds. */
  final InetAddress client;
  private boolean destroyed;
  /** Its slot was given back (VerbsAcceptor.forget; CM thread). */
  boolean forgotten;

  InboundConnection(VerbsAcceptor acceptor, RdmaCmId id, IbvCQ cq, InetAddress client) {
    this.acceptor = acceptor;
    this.id = id;
    this.cq = cq;
    this.client = client;
  }

  @Override
  public void onCmEvent(RdmaCmEvent.EventType type, CmConnectData data) {
    // A peer that never completes the handshake (no RTU) ends in UNREACHABLE or
    // CONNECT_ERROR: torn down too, so half-open connections do not hold inbound slots.
    if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED) {
      destroy();
    }
  }

  @Override
  public void onCmFailure(IOException cause) {
    destroy();
  }

  /** CM thread (or close() after the CM thread stopped). */
  void destroy() {
    if (destroyed) {
      return;
    }
    destroyed = true;
    acceptor.forget(this);
    VerbsTransport.quietly(() -> id.disconnect());
    VerbsTransport.quietly(() -> id.destroyQP());
    VerbsTransport.quietly(() -> cq.destroyCQ());
    VerbsTransport.quietly(() -> id.destroyId());
  }
}
