/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.FileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;

import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportResponseHandler;
import org.apache.spark.network.protocol.ChunkFetchSuccess;
import org.apache.spark.network.protocol.Message;
import org.apache.spark.network.protocol.MessageDecoder;
import org.apache.spark.network.protocol.MessageEncoder;
import org.apache.spark.network.protocol.ResponseMessage;
import org.apache.spark.network.protocol.RpcRequest;
import org.apache.spark.network.protocol.RpcResponse;
import org.apache.spark.network.protocol.StreamChunkId;
import org.apache.spark.network.shuffle.OneForOneBlockFetcher;
import org.apache.spark.network.shuffle.protocol.StreamHandle;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.NettyUtils;
import org.apache.spark.network.util.TransportConf;

/**
 * Spark's own per-block client path for the same blocks, in process: Spark's
 * {@link OneForOneBlockFetcher} on a real {@link TransportClient} and
 * {@link TransportResponseHandler}, behind Spark's frame decoder and message decoder in a
 * Netty {@link EmbeddedChannel} instead of a socket. The "server" answers the fetcher's
 * FetchShuffleBlocks RPC with a StreamHandle and its chunk requests with ChunkFetchSuccess
 * frames encoded by Spark's own encoder once (headers) and filled with the blocks' bytes,
 * copied from the mapping into pooled 64 KiB buffers as socket reads would deliver them
 * (frames cross buffer boundaries as on a socket). That copy stands for the kernel's socket
 * copy: the floor. Not included: the socket itself (syscalls, the kernel's TCP work) and the
 * server; both are the wire this benchmark leaves out.
 */
final class SparkClientPath implements AutoCloseable {
  private static final long STREAM = 7;
  /** A socket read's buffer: Netty's adaptive receive allocator tops out at 64 KiB. */
  private static final int READ = 64 << 10;
  /** Frame length (8) and message type (1) precede RpcResponse's request id. */
  private static final int REQUEST_ID_AT = 9;

  private final Outputs outputs;
  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final TransportClient client;
  private final TransportConf conf = new TransportConf("shuffle", MapConfigProvider.EMPTY);
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
  private final byte[] rpcFrame;
  private final byte[][] chunkHeaders;
  private final ByteBuffer[] views;
  private ByteBuf filling;

  SparkClientPath(Outputs outputs) throws IOException {
    this.outputs = outputs;
    TransportResponseHandler handler = new TransportResponseHandler(channel);
    channel.pipeline().addLast(NettyUtils.createFrameDecoder(), MessageDecoder.INSTANCE,
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            handler.handle((ResponseMessage) msg);
          }
        });
    client = new TransportClient(channel, handler);
    int n = outputs.outputs();
    rpcFrame = encode(new RpcResponse(0,
        new NioManagedBuffer(new StreamHandle(STREAM, n).toByteBuffer())));
    chunkHeaders = new byte[n][];
    views = new ByteBuffer[n];
    for (int i = 0; i < n; i++) {
      byte[] whole = encode(new ChunkFetchSuccess(new StreamChunkId(STREAM, i),
          new NioManagedBuffer(ByteBuffer.allocate(outputs.block))));
      chunkHeaders[i] = java.util.Arrays.copyOf(whole, whole.length - outputs.block);
      views[i] = outputs.data(i).duplicate();
    }
  }

  /** One fetch of partition {@code reduce} of every output; blocks end in {@code listener}. */
  void fetch(int reduce, Collector listener) {
    new OneForOneBlockFetcher(client, "app-bench", "exec-1", outputs.ids[reduce], listener,
        conf).start();
    Object sent = channel.readOutbound();
    if (!(sent instanceof RpcRequest)) {
      throw new IllegalStateException("the fetcher sent " + sent + ", not its RPC");
    }
    RpcRequest rpc = (RpcRequest) sent;
    rpc.body().release();
    ByteBuf answer = alloc.directBuffer(rpcFrame.length);
    answer.writeBytes(rpcFrame).setLong(REQUEST_ID_AT, rpc.requestId);
    channel.writeInbound(answer);
    Object chunkRequest;
    while ((chunkRequest = channel.readOutbound()) != null) {
      ReferenceCountUtil.release(chunkRequest);
    }
    filling = alloc.directBuffer(READ);
    for (int i = 0; i < chunkHeaders.length; i++) {
      put(chunkHeaders[i]);
      ByteBuffer v = views[i];
      v.limit((reduce + 1) * outputs.block).position(reduce * outputs.block);
      put(v);
    }
    if (filling.isReadable()) {
      channel.writeInbound(filling);
    } else {
      filling.release();
    }
    filling = null;
  }

  private void put(byte[] bytes) {
    int at = 0;
    while (at < bytes.length) {
      int len = Math.min(room(), bytes.length - at);
      filling.writeBytes(bytes, at, len);
      at += len;
    }
  }

  private void put(ByteBuffer src) {
    int end = src.limit();
    while (src.position() < end) {
      int len = Math.min(room(), end - src.position());
      src.limit(src.position() + len);
      filling.writeBytes(src);
      src.limit(end);
    }
  }

  /** Room left in the current socket read; a full one is handed to the pipeline first. */
  private int room() {
    if (filling.writableBytes() == 0) {
      channel.writeInbound(filling);
      filling = alloc.directBuffer(READ);
    }
    return filling.writableBytes();
  }

  /** A message as Spark's encoder puts it on the wire. */
  private static byte[] encode(Message m) throws IOException {
    EmbeddedChannel enc = new EmbeddedChannel(MessageEncoder.INSTANCE);
    enc.writeOutbound(m);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    WritableByteChannel sink = Channels.newChannel(out);
    Object o;
    while ((o = enc.readOutbound()) != null) {
      if (o instanceof FileRegion) {
        FileRegion r = (FileRegion) o;
        while (r.transferred() < r.count()) {
          r.transferTo(sink, r.transferred());
        }
      } else {
        ByteBuf b = (ByteBuf) o;
        b.readBytes(out, b.readableBytes());
      }
      ReferenceCountUtil.release(o);
    }
    enc.finishAndReleaseAll();
    return out.toByteArray();
  }

  @Override
  public void close() {
    channel.finishAndReleaseAll();
  }
}
