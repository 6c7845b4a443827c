/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetSocketAddress;

import com.ibm.disni.verbs.RdmaCmEvent;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRefusedException;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA-CM side of one connection this executor reads through, on the CM thread: it
 * drives the handshake (resolve address, resolve route, create the QP, connect with the
 * offered READ depth and, with spark.authenticate, the authentication request), checks the
 * server's proof and the granted depth on ESTABLISHED and activates the {@link VerbsChannel},
 * and reports a lost or refused connection to it. The mirror of {@link InboundConnection}.
 */
final class OutboundConnection implements CmHandler {
  private static final Logger LOG = LoggerFactory.getLogger(OutboundConnection.class);
  static final int RESOLVE_TIMEOUT_MS = 2000;

  private final VerbsConnector connector;
  private final VerbsChannel channel;
  private final PeerAddress peer;
  /** initiator_depth offered in the connect request. */
  private int offeredReadDepth;
  /** With spark.authenticate: the request sent, the server endpoint and our QP number. */
  private byte[] authRequest;
  private byte[] authServer;
  /** Our address as bound into the MACs (ConnectAuth.address). */
  private byte[] authClient;
  private int authQpn;

  OutboundConnection(VerbsConnector connector, VerbsChannel channel) {
    this.connector = connector;
    this.channel = channel;
    this.peer = channel.peer();
  }

  @Override
  public void onCmEvent(RdmaCmEvent.EventType type, CmConnectData data) throws IOException {
    switch (type) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        channel.id.resolveRoute(RESOLVE_TIMEOUT_MS);
        break;
      case RDMA_CM_EVENT_ROUTE_RESOLVED:
        connector.createQueuePair(channel);
        sendRequest();
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        if (!serverProved(data)) {
          channel.fail(new IOException("RDMA connect to " + peer + " refused: the peer did "
              + "not prove it knows the application secret (spark.authenticate)"));
          break;
        }
        channel.activate(negotiatedReadDepth(data));
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        channel.fail(new IOException("RDMA connection to " + peer + " lost (" + type + ")"));
        break;
      case RDMA_CM_EVENT_REJECTED:
        // The peer's CM answered no: nobody listens there any more (the executor is gone),
        // or it refused us. A reader does not retry this.
        channel.fail(new ReadRefusedException("RDMA connect to " + peer + " failed: " + type
            + explain(type)));
        break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
        channel.fail(new IOException("RDMA connect to " + peer + " failed: " + type
            + explain(type)));
        break;
      default:
        break;
    }
  }

  private static String explain(RdmaCmEvent.EventType type) {
    switch (type) {
      case RDMA_CM_EVENT_ADDR_ERROR:
        return " (no RDMA route to that IP from the bound device: is the peer's address on "
            + "an RDMA netdev, and reachable from spark.shuffle.rdma.bindAddress?)";
      case RDMA_CM_EVENT_REJECTED:
        return " (nobody listens there, or the peer refused: is the peer on the verbs "
            + "transport, and with spark.authenticate, of the same application and secret?)";
      case RDMA_CM_EVENT_UNREACHABLE:
        return " (the peer did not answer the connection request)";
      default:
        return "";
    }
  }

  @Override
  public void onCmFailure(IOException cause) {
    channel.fail(cause);
  }

  /**
   * After the QP exists: sends the connection request, offering this device's
   * max_qp_init_rd_atom as initiator_depth (and no responder resources: nobody reads from us
   * on this QP), with the authentication request as its private data when spark.authenticate
   * is on.
   */
  private void sendRequest() throws IOException {
    offeredReadDepth = ReadDepth.offer(connector.device());
    ConnectAuth auth = connector.auth();
    if (auth != null) {
      authServer = ConnectAuth.endpoint((InetSocketAddress) channel.id.getDestination());
      // Our address as the server's RDMA-CM will report it: the source the route resolved.
      authClient = ConnectAuth.address(
          ((InetSocketAddress) channel.id.getSource()).getAddress());
      authQpn = channel.qp.getQp_num();
      authRequest = auth.request(authServer, authClient, authQpn);
    }
    CmNative.connect(VerbsTransport.handle(channel.id), RcQueuePairs.TRANSPORT_RETRY,
        RcQueuePairs.RNR_RETRY, offeredReadDepth, 0, authRequest);
  }

  /**
   * On ESTABLISHED: whether the server proved it knows the secret (always true without
   * spark.authenticate). A failed proof is counted; the caller fails the channel.
   */
  private boolean serverProved(CmConnectData data) {
    ConnectAuth auth = connector.auth();
    if (auth == null) {
      return true;
    }
    String refusal = data == null || authRequest == null ? "no reply data"
        : auth.replyRefusal(authRequest, data.privateData, data.length, authServer,
            authClient, authQpn, data.peerQpNum);
    if (refusal != null) {
      connector.stats().connectionsRejected.incrementAndGet();
      LOG.warn("refusing RDMA connection to {}: the server did not prove it knows the "
          + "application secret: {}", peer, refusal);
    }
    return refusal == null;
  }

  /**
   * On ESTABLISHED: the READ depth of this connection, the lesser of what we offered and
   * what the server granted; logged at debug, kept in the readDepth gauge.
   */
  private int negotiatedReadDepth(CmConnectData data) {
    int granted = data == null ? 0 : ReadDepth.peerFigure(data.readDepths);
    int depth = ReadDepth.negotiated(offeredReadDepth, granted);
    connector.stats().readDepth.set(depth);
    LOG.debug("verbs: connection to {} queue pair {}: READ depth {} (offered {}, granted {}, "
        + "event depths 0x{}), {} posted at most", peer, channel.lane, depth,
        offeredReadDepth, granted, Integer.toHexString(data == null ? 0 : data.readDepths),
        ReadDepth.window(channel.depth(), depth));
    return depth;
  }
}
