/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serving side's connections: it answers peers that want to READ this executor's map
 * outputs (CONNECT_REQUEST on the listening id, on the RDMA-CM thread), checks their
 * authentication before anything exists for them, grants their READ depth, and keeps one
 * minimal {@link InboundConnection} per peer queue pair until the peer disconnects. Nothing
 * here runs per READ: the NIC answers them from registered memory.
 */
final class VerbsAcceptor {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsAcceptor.class);

  private final TransportStats stats;
  private final CmEventLoop cm;
  private final long contextHandle;
  private final VerbsMemory memory;
  /** Inbound CQs are never armed or polled; DiSNI only insists on a completion channel. */
  private final IbvCompChannel compChannel;
  /** Connection authentication; null without spark.authenticate. */
  private final ConnectAuth auth;
  private final ReadDepth.Device device;
  private final Set<InboundConnection> inbound = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  VerbsAcceptor(TransportStats stats, CmEventLoop cm, long contextHandle, VerbsMemory memory,
      IbvCompChannel compChannel, ConnectAuth auth, ReadDepth.Device device) {
    this.stats = stats;
    this.cm = cm;
    this.contextHandle = contextHandle;
    this.memory = memory;
    this.compChannel = compChannel;
    this.auth = auth;
    this.device = device;
  }

  /**
   * CM thread, on CONNECT_REQUEST: a peer wants to READ from us. With spark.authenticate
   * its request is verified first; a refused one is rejected before any QP exists for it.
   */
  void accept(RdmaCmId id, CmConnectData data) {
    if (id == null) {
      return;
    }
    byte[] server = null;
    if (auth != null) {
      String refusal;
      try {
        server = ConnectAuth.endpoint((InetSocketAddress) id.getSource());
        refusal = auth.checkRequest(data.privateData, data.length, server, data.peerQpNum);
      } catch (IOException | RuntimeException e) {
        refusal = "cannot check it: " + e;
      }
      if (refusal != null) {
        stats.connectionsRejected.incrementAndGet();
        LOG.warn("rejected RDMA connection request from {}: {}", peerOf(id), refusal);
        CmNative.reject(VerbsTransport.handle(id));
        VerbsTransport.quietly(id::destroyId);
        return;
      }
    }
    IbvCQ cq = null;
    try {
      if (closed) {
        throw new IOException("closed");
      }
      IbvContext ctx = id.getVerbs();
      if (((NatObject) ctx).getObjId() != contextHandle) {
        throw new IOException("connection request arrived on another RDMA device");
      }
      // The responder side posts nothing: a minimal CQ and QP suffice.
      cq = ctx.createCQ(compChannel, 2, 0);
      IbvQP qp = id.createQP(memory.pd(), RcQueuePairs.attr(cq, 1, 1));
      InboundConnection in = new InboundConnection(this, id, cq);
      cm.register(id, in);
      inbound.add(in);
      // Serve as many READs at once as the reader asked for, at most our max_qp_rd_atom.
      int requested = data == null ? 0 : ReadDepth.peerFigure(data.readDepths);
      int granted = ReadDepth.grant(requested, device);
      LOG.debug("verbs: accepting {}: READ depth requested {}, granted {}", peerOf(id),
          requested, granted);
      CmNative.accept(VerbsTransport.handle(id), RcQueuePairs.RETRY, RcQueuePairs.RETRY, 0,
          granted, auth == null ? null
              : auth.reply(data.privateData, server, data.peerQpNum, qp.getQp_num()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("refusing RDMA connection request: {}", e.toString());
      IbvCQ c = cq;
      VerbsTransport.quietly(id::destroyQP);
      if (c != null) {
        VerbsTransport.quietly(c::destroyCQ);
      }
      VerbsTransport.quietly(id::destroyId);
    }
  }

  private static String peerOf(RdmaCmId id) {
    try {
      return String.valueOf(id.getDestination());
    } catch (IOException | RuntimeException e) {
      return "an unknown peer";
    }
  }

  /** CM thread: the connection was torn down. */
  void forget(InboundConnection in) {
    inbound.remove(in);
    cm.unregister(in.id);
  }

  /** Refuses new connection requests; existing ones stay until {@link #destroyAll}. */
  void close() {
    closed = true;
  }

  /** After the CM thread stopped: tears every inbound connection down. */
  void destroyAll() {
    for (InboundConnection in : new ArrayList<>(inbound)) {
      in.destroy();
    }
  }
}
