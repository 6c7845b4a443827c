/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;

import io.netty.channel.Channel;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.StreamCallbackWithID;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.server.AbstractAuthRpcHandler;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.StreamManager;
import org.apache.spark.network.server.TransportServerBootstrap;

/**
 * Installed right after Spark's auth bootstrap: wraps the auth handler it returned (SASL's
 * or the auth engine's, both {@link AbstractAuthRpcHandler}s) and, as soon as that handler
 * reports the handshake complete, marks the connection authenticated ({@link PeerState}).
 * That flag, not the client id, is what the region server checks: SASL records the client
 * id from the peer's first message, before any proof.
 *
 * <p>It also keeps a failed handshake quiet and short: Spark would log each failure with a
 * stack trace at error level and send the trace to the peer; here the peer gets one line,
 * the connection is closed ({@link ConnectionGuard} counts and logs failed handshakes).
 */
final class AuthGate implements TransportServerBootstrap {
  private final ConnectionGuard guard;

  AuthGate(ConnectionGuard guard) {
    this.guard = guard;
  }

  @Override
  public RpcHandler doBootstrap(Channel channel, RpcHandler rpcHandler) {
    if (!(rpcHandler instanceof AbstractAuthRpcHandler)) {
      // Fail closed: without a handler that reports completion nothing could ever read.
      throw new IllegalStateException("spark.authenticate is on but Spark's auth bootstrap "
          + "returned " + rpcHandler.getClass().getName() + ", not an AbstractAuthRpcHandler");
    }
    return new Gated(channel, (AbstractAuthRpcHandler) rpcHandler);
  }

  private final class Gated extends RpcHandler {
    private final Channel channel;
    private final AbstractAuthRpcHandler auth;

    Gated(Channel channel, AbstractAuthRpcHandler auth) {
      this.channel = channel;
      this.auth = auth;
    }

    @Override
    public void receive(TransportClient client, ByteBuffer message,
        RpcResponseCallback callback) {
      boolean before = auth.isAuthenticated();
      try {
        auth.receive(client, message, callback);
      } catch (RuntimeException e) {
        if (before) {
          throw e; // the region server's own failure: network-common answers it
        }
        callback.onFailure(new Refusal("authentication failed"));
        channel.close();
        return;
      }
      if (!before && auth.isAuthenticated()) {
        guard.authenticated(channel);
      }
    }

    @Override
    public StreamCallbackWithID receiveStream(TransportClient client, ByteBuffer header,
        RpcResponseCallback callback) {
      return auth.receiveStream(client, header, callback);
    }

    @Override
    public void receive(TransportClient client, ByteBuffer message) {
      auth.receive(client, message);
    }

    @Override
    public StreamManager getStreamManager() {
      return auth.getStreamManager();
    }

    @Override
    public MergedBlockMetaReqHandler getMergedBlockMetaReqHandler() {
      return auth.getMergedBlockMetaReqHandler();
    }

    @Override
    public void channelActive(TransportClient client) {
      auth.channelActive(client);
    }

    @Override
    public void channelInactive(TransportClient client) {
      auth.channelInactive(client);
    }

    @Override
    public void exceptionCaught(Throwable cause, TransportClient client) {
      auth.exceptionCaught(cause, client);
    }
  }
}
