/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;
import java.util.LinkedList;
import java.util.List;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostSend;
import org.apache.spark.shuffle.rdma.transport.verbs.KeepaliveProbe;

/**
 * The serving side of a peer's connection. It does no work per read (the NIC answers RDMA
 * READs from registered memory without the CPU); it only exists so the QP lives until the
 * peer disconnects, or vanishes (its keepalive probe fails), then it is torn down on the CM
 * thread.
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
  /** Keepalive: null without probes (spark.shuffle.rdma.verbs.keepaliveInterval=0). */
  private KeepaliveProbe keepalive;
  private SVCPostSend probe;
  private SVCPollCq poll;
  private final IbvWC[] completions = {new IbvWC()};

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

  /**
   * CM thread, once accepted: probe the reader every {@code intervalMs} with a zero-length
   * RDMA WRITE (see {@link KeepaliveProbe}); the QP has one send slot and the CQ two entries
   * for it, and the probe is the only request this side ever posts.
   */
  void keepAlive(IbvQP qp, long intervalMs, long nowNanos) throws IOException {
    if (intervalMs <= 0) {
      return;
    }
    IbvSendWR wr = new IbvSendWR();
    wr.setOpcode(IbvSendWR.IBV_WR_RDMA_WRITE);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.setSg_list(new LinkedList<>());
    wr.setNum_sge(0);
    wr.getRdma().setRemote_addr(0);
    wr.getRdma().setRkey(0);
    probe = qp.postSend(List.of(wr), null);
    poll = cq.poll(completions, 1);
    keepalive = new KeepaliveProbe(intervalMs, nowNanos);
  }

  /** CM thread: one keepalive step; false when the reader is gone and this must go too. */
  boolean keepAliveStep(long nowNanos) {
    if (keepalive == null || destroyed) {
      return true;
    }
    try {
      int status = -1;
      if (keepalive.outstanding() && poll.execute().getPolls() > 0) {
        status = completions[0].getStatus();
      }
      switch (keepalive.step(nowNanos, status)) {
        case POST:
          probe.execute();
          return true;
        case TEAR_DOWN:
          return false;
        default:
          return true;
      }
    } catch (IOException | RuntimeException e) {
      return false; // the QP cannot even take a probe: it is broken
    }
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
    if (probe != null) {
      VerbsTransport.quietly(() -> probe.free());
      VerbsTransport.quietly(() -> poll.free());
    }
  }
}
