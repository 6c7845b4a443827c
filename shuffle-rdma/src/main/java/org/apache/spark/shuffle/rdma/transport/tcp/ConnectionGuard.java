/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.TransportServerBootstrap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Limits what any peer gets from the tcp server before (and regardless of) authentication:
 * at most {@code maxPerAddress} open connections per remote IP address, and no inbound frame
 * longer than {@code maxFrameSize}. Spark's network-common has neither (its frame decoder
 * buffers frames up to 2 GiB, and it accepts any number of connections), so a peer without
 * the secret could otherwise hold memory or sockets before the auth handshake ever fails.
 *
 * <p>Installed as the first server bootstrap: its handler goes in front of network-common's
 * frame decoder. Decryption handlers, added later with addFirst once a session is
 * authenticated, sit in front of it, so it always reads plaintext frame headers.
 */
final class ConnectionGuard implements TransportServerBootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

  private final int maxPerAddress;
  private final long maxFrameSize;
  private final ConcurrentHashMap<InetAddress, AtomicInteger> open = new ConcurrentHashMap<>();
  final AtomicLong connectionsRefused = new AtomicLong();
  final AtomicLong framesRefused = new AtomicLong();

  ConnectionGuard(int maxPerAddress, long maxFrameSize) {
    this.maxPerAddress = maxPerAddress;
    this.maxFrameSize = maxFrameSize;
  }

  @Override
  public RpcHandler doBootstrap(Channel channel, RpcHandler rpcHandler) {
    SocketAddress remote = channel.remoteAddress();
    InetAddress address = remote instanceof InetSocketAddress
        ? ((InetSocketAddress) remote).getAddress() : null;
    if (address != null) {
      AtomicInteger count = open.computeIfAbsent(address, a -> new AtomicInteger());
      int now = count.incrementAndGet();
      if (now > maxPerAddress) {
        count.decrementAndGet();
        long refused = connectionsRefused.incrementAndGet();
        if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th, ...: visible, not a log flood
          LOG.warn("tcp transport: refused a connection from {}: {} connections from that "
              + "address are open, the limit is {} (spark.shuffle.rdma.tcp.maxConnectionsPerAddress);"
              + " {} refused so far", address.getHostAddress(), maxPerAddress, maxPerAddress,
              refused);
        }
        channel.close();
        return rpcHandler;
      }
      channel.closeFuture().addListener(f -> {
        if (count.decrementAndGet() == 0) {
          open.remove(address, count);
        }
      });
    }
    channel.pipeline().addLast("rdmaFrameGuard", new FrameGuard(address));
    return rpcHandler;
  }

  /** Open connections from one address (for tests). */
  int openFrom(InetAddress address) {
    AtomicInteger c = open.get(address);
    return c == null ? 0 : c.get();
  }

  /**
   * Follows network-common's framing (an 8-byte big-endian length that counts itself, then
   * the frame) without buffering anything, and closes the connection at the first header
   * over the limit.
   */
  private final class FrameGuard extends ChannelInboundHandlerAdapter {
    private final InetAddress peer;
    private long frameBytesLeft;
    private long header;
    private int headerBytes;
    private boolean refused;

    FrameGuard(InetAddress peer) {
      this.peer = peer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (refused) {
        release(msg);
        return;
      }
      if (msg instanceof ByteBuf) {
        ByteBuf buf = (ByteBuf) msg;
        int i = buf.readerIndex();
        int end = buf.writerIndex();
        while (i < end) {
          if (frameBytesLeft > 0) {
            int n = (int) Math.min(frameBytesLeft, end - i);
            i += n;
            frameBytesLeft -= n;
            continue;
          }
          header = (header << 8) | (buf.getByte(i++) & 0xFF);
          if (++headerBytes == 8) {
            long length = header;
            header = 0;
            headerBytes = 0;
            if (length > maxFrameSize) {
              refused = true;
              framesRefused.incrementAndGet();
              LOG.warn("tcp transport: closed the connection from {}: it announced a frame of {}"
                  + " bytes, the limit is {} (spark.shuffle.rdma.tcp.maxRequestFrameSize)",
                  peer == null ? ctx.channel().remoteAddress() : peer.getHostAddress(), length,
                  maxFrameSize);
              buf.release();
              ctx.close();
              return;
            }
            // A length under 8 is malformed: network-common's decoder refuses it next.
            frameBytesLeft = Math.max(0, length - 8);
          }
        }
      }
      ctx.fireChannelRead(msg);
    }

    private void release(Object msg) {
      if (msg instanceof ByteBuf) {
        ((ByteBuf) msg).release();
      }
    }
  }
}
