/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;
import org.apache.spark.network.protocol.ChunkFetchSuccess;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.TransportServerBootstrap;

/**
 * The tcp server's write path for answers to read batches. network-common encodes every
 * answer with a body as one {@code MessageWithHeader} (a FileRegion): two write system calls
 * per answer (its header, then its body) and a flush per answer. This handler, in front of
 * network-common's encoder, writes a batch's answer ({@link BatchAnswer}) as the same frame
 * (8-byte length, type, stream chunk id, body) made of plain Netty messages instead: the
 * frame header and the batch's prefix in one pooled buffer, then each served read's body as
 * a slice of the mapping, with no header between two bodies, so the answers of a burst of
 * requests go out in one gathering write; reads at least {@code sendfileThreshold} long from
 * a file-backed region go as a file region (sendfile, zero copy). A {@link
 * FlushConsolidationHandler} holds the flushes of the answers to one read burst until the
 * burst is handled. The bytes on the wire are exactly network-common's; everything else
 * (handshake answers, RpcFailures) still takes network-common's encoder.
 *
 * <p>Installed per connection when it becomes active (network-common's pipeline is complete
 * then). TLS connections (spark.ssl.rpc) keep network-common's path; encrypted ones
 * ({@code sendfileAllowed} false) get mapping slices only, which the cipher handlers take.
 */
final class ServeEncoder extends ChannelOutboundHandlerAdapter {
  static final String NAME = "rdmaServeEncoder";
  static final String FLUSH_NAME = "rdmaFlushConsolidation";
  /** network-common's encoder handler name (TransportContext.initializePipeline). */
  static final String SPARK_ENCODER = "encoder";

  private final boolean sendfileAllowed;
  private final long sendfileThreshold;

  ServeEncoder(boolean sendfileAllowed, long sendfileThreshold) {
    this.sendfileAllowed = sendfileAllowed;
    this.sendfileThreshold = sendfileThreshold;
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (msg instanceof ChunkFetchSuccess
        && ((ChunkFetchSuccess) msg).body() instanceof BatchAnswer) {
      writeBatch(ctx, (ChunkFetchSuccess) msg, promise);
      return;
    }
    ctx.write(msg, promise);
  }

  /**
   * A batch's answer: one header (the frame header and the batch's prefix in one buffer),
   * then every served slice, so a burst of small reads leaves in one gathering write and
   * large ones as sendfiles with no header write between them.
   */
  private void writeBatch(ChannelHandlerContext ctx, ChunkFetchSuccess answer,
      ChannelPromise promise) {
    BatchAnswer body = (BatchAnswer) answer.body();
    java.util.List<RegionSliceBuffer> parts = body.parts();
    ByteBuf header = null;
    Object[] data = new Object[parts.size()];
    try {
      int headerLength = 8 + answer.type().encodedLength() + answer.encodedLength();
      header = ctx.alloc().directBuffer(headerLength + body.prefix().readableBytes());
      header.writeLong(headerLength + body.size()); // the frame length counts itself
      answer.type().encode(header);
      answer.encode(header);
      header.writeBytes(body.prefix(), body.prefix().readerIndex(),
          body.prefix().readableBytes());
      for (int i = 0; i < data.length; i++) {
        data[i] = parts.get(i).nettyBody(sendfileAllowed, sendfileThreshold);
      }
    } catch (RuntimeException | Error e) {
      if (header != null) {
        header.release();
      }
      for (Object d : data) {
        io.netty.util.ReferenceCountUtil.release(d);
      }
      body.release();
      promise.setFailure(e);
      return;
    }
    // The answer's promise completes with its last write; so do its region references.
    promise.addListener(body);
    if (data.length == 0) {
      ctx.write(header, promise);
      return;
    }
    ctx.write(header, ctx.voidPromise());
    for (int i = 0; i < data.length - 1; i++) {
      ctx.write(data[i], ctx.voidPromise());
    }
    ctx.write(data[data.length - 1], promise);
  }

  /** Server bootstrap that installs the handler on each connection once it is active. */
  static TransportServerBootstrap bootstrap(boolean sendfileAllowed, long sendfileThreshold) {
    return (Channel channel, RpcHandler rpcHandler) -> {
      channel.pipeline().addLast("rdmaServeInstaller", new ChannelInboundHandlerAdapter() {
        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
          ChannelPipeline p = ctx.pipeline();
          if (p.get(SPARK_ENCODER) != null && p.get(SslHandler.class) == null) {
            // Outbound messages pass tail to head: these see answers before the encoder.
            p.addAfter(SPARK_ENCODER, FLUSH_NAME, new FlushConsolidationHandler(
                FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false));
            p.addAfter(FLUSH_NAME, NAME, new ServeEncoder(sendfileAllowed, sendfileThreshold));
          }
          ctx.fireChannelActive(); // reads start after this: the handlers are in place
          p.remove(this);
        }
      });
      return rpcHandler;
    };
  }
}
