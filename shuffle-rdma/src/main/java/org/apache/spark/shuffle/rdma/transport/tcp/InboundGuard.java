/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.spark.shuffle.rdma.config.RdmaConf;

/**
 * Checks every inbound frame before network-common's decoder sees it, so that nothing a peer
 * declares makes the server allocate, queue or decode more than the bytes it really sent.
 * Any frame that breaks a rule closes the connection (no answer) and is counted.
 *
 * <p>Before the connection authenticated, whole frames are taken in (at most {@link
 * HandshakeFrames#MAX_FRAME} bytes each, at most {@link #MAX_HANDSHAKE_FRAMES} of them) and
 * passed on one at a time, only if each is a well-formed handshake message
 * ({@link HandshakeFrames}); after each, the auth handler has run (the pipeline is
 * synchronous), so the next frame is judged by the new state. Bytes behind the frame that
 * completed the handshake are refused: a client waits for the server's answer before it
 * sends anything else, and those bytes would bypass the session cipher installed meanwhile.
 *
 * <p>After authentication nothing is buffered: frames are followed by their headers, each
 * must be an RpcRequest (a read batch; the only request this server answers) whose body
 * length matches the frame, and no longer than {@code maxFrameSize}.
 */
final class InboundGuard extends ChannelInboundHandlerAdapter {
  /** SASL needs two messages from the client, the auth engine one; room for one more. */
  static final int MAX_HANDSHAKE_FRAMES = 3;

  private final ConnectionGuard guard;
  private final PeerState state;
  private final long maxFrameSize;
  private final boolean authEngine;
  private boolean refused;
  private int handshakeFrames;
  /** Pre-auth: the frame being taken in (its length header included), or null. */
  private ByteBuf pending;
  private long pendingLength;
  /** Post-auth: bytes of the current frame still to skip, and its header so far. */
  private long frameBytesLeft;
  private final byte[] header = new byte[HandshakeFrames.RPC_HEADER];
  private int headerBytes;

  InboundGuard(ConnectionGuard guard, PeerState state, long maxFrameSize, boolean authEngine) {
    this.guard = guard;
    this.state = state;
    this.maxFrameSize = maxFrameSize;
    this.authEngine = authEngine;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (refused || !(msg instanceof ByteBuf)) {
      if (refused) {
        io.netty.util.ReferenceCountUtil.release(msg);
      } else {
        ctx.fireChannelRead(msg);
      }
      return;
    }
    ByteBuf buf = (ByteBuf) msg;
    try {
      while (!state.authenticated && buf.isReadable()) {
        if (!takeHandshakeBytes(ctx, buf)) {
          return;
        }
      }
      if (!buf.isReadable()) {
        return;
      }
      String problem = scanAuthenticated(buf);
      if (problem != null) {
        refuse(ctx, problem);
        return;
      }
      ctx.fireChannelRead(buf.retain());
    } finally {
      buf.release();
    }
  }

  /**
   * Takes bytes of a handshake frame; passes the frame on once whole and well-formed.
   * False when the connection was refused.
   */
  private boolean takeHandshakeBytes(ChannelHandlerContext ctx, ByteBuf buf) {
    if (pending == null) {
      pending = ctx.alloc().heapBuffer(8, HandshakeFrames.MAX_FRAME);
      pendingLength = -1;
    }
    if (pendingLength < 0) {
      pending.writeBytes(buf, Math.min(buf.readableBytes(), 8 - pending.readableBytes()));
      if (pending.readableBytes() < 8) {
        return true;
      }
      pendingLength = pending.getLong(0);
      if (pendingLength <= HandshakeFrames.RPC_HEADER
          || pendingLength > HandshakeFrames.MAX_FRAME) {
        refuse(ctx, "a frame of " + pendingLength + " bytes before authentication (at most "
            + HandshakeFrames.MAX_FRAME + ")");
        return false;
      }
    }
    int need = (int) pendingLength - pending.readableBytes();
    pending.writeBytes(buf, Math.min(need, buf.readableBytes()));
    if (pending.readableBytes() < pendingLength) {
      return true;
    }
    ByteBuf frame = pending;
    pending = null;
    String problem = HandshakeFrames.problem(frame, authEngine);
    if (problem == null && ++handshakeFrames > MAX_HANDSHAKE_FRAMES) {
      problem = "more than " + MAX_HANDSHAKE_FRAMES + " handshake messages";
    }
    if (problem != null) {
      frame.release();
      refuse(ctx, problem + " before authentication");
      return false;
    }
    state.handshakeFrames++;
    ctx.fireChannelRead(frame); // Spark's auth handler runs on it, synchronously
    if (!ctx.channel().isOpen()) {
      refused = true; // the handshake failed: the auth handler closed the connection
      return false;
    }
    if (state.authenticated && buf.isReadable()) {
      refuse(ctx, "bytes sent behind the handshake before its answer");
      return false;
    }
    return true;
  }

  /** Follows frame headers without buffering; null when all of {@code buf} may pass. */
  private String scanAuthenticated(ByteBuf buf) {
    int i = buf.readerIndex();
    int end = buf.writerIndex();
    while (i < end) {
      if (frameBytesLeft > 0) {
        int n = (int) Math.min(frameBytesLeft, end - i);
        i += n;
        frameBytesLeft -= n;
        continue;
      }
      header[headerBytes++] = buf.getByte(i++);
      if (headerBytes == 8) {
        long length = longAt(0);
        if (length > maxFrameSize) {
          return "it announced a frame of " + length + " bytes, the limit is " + maxFrameSize
              + " (" + RdmaConf.TCP_MAX_REQUEST_FRAME_SIZE().key() + ")";
        }
        if (length < HandshakeFrames.RPC_HEADER) {
          return "a frame of " + length + " bytes";
        }
      } else if (headerBytes == HandshakeFrames.RPC_HEADER) {
        long length = longAt(0);
        if (header[8] != HandshakeFrames.RPC_REQUEST) {
          return "message type " + header[8] + " (this server answers read batches only)";
        }
        int body = ((header[17] & 0xFF) << 24) | ((header[18] & 0xFF) << 16)
            | ((header[19] & 0xFF) << 8) | (header[20] & 0xFF);
        if (body != length - HandshakeFrames.RPC_HEADER) {
          return "request body length " + body + " does not match its frame of " + length;
        }
        headerBytes = 0;
        frameBytesLeft = length - HandshakeFrames.RPC_HEADER;
      }
    }
    return null;
  }

  private long longAt(int at) {
    long v = 0;
    for (int k = 0; k < 8; k++) {
      v = (v << 8) | (header[at + k] & 0xFF);
    }
    return v;
  }

  private void refuse(ChannelHandlerContext ctx, String why) {
    refused = true;
    state.closedByGuard = true;
    if (pending != null) {
      pending.release();
      pending = null;
    }
    guard.frameRefused(ctx.channel(), why);
    ctx.close();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (pending != null) {
      pending.release();
      pending = null;
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (pending != null) {
      pending.release();
      pending = null;
    }
    super.channelInactive(ctx);
  }
}
