/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectGate;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serving side's connections: it answers peers that want to READ this executor's map
 * outputs (CONNECT_REQUEST on the listening id, on the RDMA-CM thread), checks their
 * authentication and the inbound queue pair limits ({@link ConnectGate}) before anything
 * exists for them, grants their READ depth, and keeps one
 * minimal {@link InboundConnection} per peer queue pair until the peer disconnects. Nothing
 * here runs per READ: the NIC answers them from registered memory.
 */
final class VerbsAcceptor {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsAcceptor.class);
  private static final long SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final TransportStats stats;
  private final CmEventLoop cm;
  private final long contextHandle;
  private final VerbsMemory memory;
  /**
   * Inbound CQs are never armed (DiSNI only insists on a completion channel); the CM thread
   * polls them for keepalive probes' completions.
   */
  private final IbvCompChannel compChannel;
  /** Connection authentication; null without spark.authenticate. */
  private final ConnectAuth auth;
  /** Authentication and inbound limits, checked before a QP exists. */
  private final ConnectGate gate;
  private final ReadDepth.Device device;
  private final Set<InboundConnection> inbound = ConcurrentHashMap.newKeySet();
  /** spark.shuffle.rdma.verbs.keepaliveInterval; 0: inbound connections are not probed. */
  private final long keepaliveMs;
  private long nextSweep;
  private volatile boolean closed;

  VerbsAcceptor(TransportStats stats, CmEventLoop cm, long contextHandle, VerbsMemory memory,
      IbvCompChannel compChannel, ConnectAuth auth, ConnectGate gate, ReadDepth.Device device,
      long keepaliveMs) {
    this.keepaliveMs = keepaliveMs;
    this.stats = stats;
    this.cm = cm;
    this.contextHandle = contextHandle;
    this.memory = memory;
    this.compChannel = compChannel;
    this.auth = auth;
    this.gate = gate;
    this.device = device;
  }

  /**
   * CM thread, on CONNECT_REQUEST: a peer wants to READ from us. Its request is checked by
   * the gate first (authentication with spark.authenticate, then the inbound limits); a
   * refused one is rejected before any QP or CQ exists for it.
   */
  void accept(RdmaCmId id, CmConnectData data) {
    if (id == null) {
      return;
    }
    InetAddress client = peerAddress(id);
    byte[] server = null;
    String refusal;
    try {
      if (auth != null) {
        server = ConnectAuth.endpoint((InetSocketAddress) id.getSource());
      }
      refusal = data == null ? "no connection data" : gate.admit(data.privateData,
          data.length, server, client, data.peerQpNum);
    } catch (IOException | RuntimeException e) {
      refusal = "cannot check it: " + e;
      gate.refuse(String.valueOf(client), refusal);
    }
    if (refusal != null) {
      stats.connectionsRejected.incrementAndGet();
      CmNative.reject(VerbsTransport.handle(id));
      VerbsTransport.quietly(id::destroyId);
      return;
    }
    IbvCQ cq = null;
    InboundConnection in = null;
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
      in = new InboundConnection(this, id, cq, client);
      in.keepAlive(qp, keepaliveMs, System.nanoTime());
      cm.register(id, in);
      inbound.add(in);
      stats.inboundQueuePairs.set(inbound.size());
      // Serve as many READs at once as the reader asked for, at most our max_qp_rd_atom.
      int requested = data == null ? 0 : ReadDepth.peerFigure(data.readDepths);
      int granted = ReadDepth.grant(requested, device);
      LOG.debug("verbs: accepting {}: READ depth requested {}, granted {}", peerOf(id),
          requested, granted);
      CmNative.accept(VerbsTransport.handle(id), RcQueuePairs.TRANSPORT_RETRY,
          RcQueuePairs.RNR_RETRY, 0, granted, auth == null ? null : auth.reply(data.privateData,
              server, ConnectAuth.address(client), data.peerQpNum, qp.getQp_num()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("refusing RDMA connection request: {}", e.toString());
      IbvCQ c = cq;
      VerbsTransport.quietly(id::destroyQP);
      if (c != null) {
        VerbsTransport.quietly(c::destroyCQ);
      }
      VerbsTransport.quietly(id::destroyId);
      if (in != null) {
        forget(in);
      } else {
        gate.release(client);
      }
    }
  }

  /** The connecting side's IP as RDMA-CM reports it (the request id's peer); null if none. */
  private static InetAddress peerAddress(RdmaCmId id) {
    try {
      InetSocketAddress a = (InetSocketAddress) id.getDestination();
      return a == null ? null : a.getAddress();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static String peerOf(RdmaCmId id) {
    try {
      return String.valueOf(id.getDestination());
    } catch (IOException | RuntimeException e) {
      return "an unknown peer";
    }
  }

  /** CM thread: the connection was torn down; its slot in the inbound limits is free. */
  void forget(InboundConnection in) {
    if (in.forgotten) {
      return;
    }
    in.forgotten = true;
    inbound.remove(in);
    stats.inboundQueuePairs.set(inbound.size());
    cm.unregister(in.id);
    gate.release(in.client);
  }

  /**
   * CM thread, every tick: a keepalive step for each inbound connection (at most every
   * 100 ms); a connection whose probe failed lost its reader and is torn down.
   */
  void sweep() {
    if (keepaliveMs <= 0 || inbound.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    if (now - nextSweep < 0) {
      return;
    }
    nextSweep = now + SWEEP_NANOS;
    for (InboundConnection in : inbound) {
      if (!in.keepAliveStep(now)) {
        long n = stats.keepaliveFailures.incrementAndGet();
        if (RareLog.due(n)) {
          LOG.warn("verbs: the reader at {} stopped answering keepalive probes "
              + "(spark.shuffle.rdma.verbs.keepaliveInterval); its queue pair is freed ({} so "
              + "far)", in.client, n);
        }
        in.destroy();
      }
    }
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
