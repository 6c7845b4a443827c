/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.compat.CompatManagedBuffer;

/**
 * The body of a batch's answer (see {@link ReadBatch}): the prefix (statuses and refusal
 * reasons) and the served slices in request order. Owns the prefix and one region reference
 * per slice; all are dropped once, when the write ended ({@link ServeEncoder} makes this the
 * write's listener) or when network-common's encoder releases the message.
 */
final class BatchAnswer extends CompatManagedBuffer implements ChannelFutureListener {
  private final ByteBuf prefix;
  private final List<RegionSliceBuffer> parts;
  private final long size;
  private final AtomicBoolean released = new AtomicBoolean();

  BatchAnswer(ByteBuf prefix, List<RegionSliceBuffer> parts) {
    this.prefix = prefix;
    this.parts = parts;
    long s = prefix.readableBytes();
    for (RegionSliceBuffer p : parts) {
      s += p.size();
    }
    this.size = s;
  }

  ByteBuf prefix() {
    return prefix;
  }

  List<RegionSliceBuffer> parts() {
    return parts;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public ByteBuffer nioByteBuffer() {
    ByteBuf all = (ByteBuf) convertToNetty();
    try {
      ByteBuffer copy = ByteBuffer.allocate(all.readableBytes());
      all.getBytes(all.readerIndex(), copy);
      copy.flip();
      return copy;
    } finally {
      all.release();
    }
  }

  @Override
  public InputStream createInputStream() {
    return new ByteBufInputStream(Unpooled.wrappedBuffer(nioByteBuffer()));
  }

  @Override
  public ManagedBuffer retain() {
    throw new UnsupportedOperationException("batch answers are owned by one write");
  }

  @Override
  public ManagedBuffer release() {
    if (released.compareAndSet(false, true)) {
      prefix.release();
      for (RegionSliceBuffer p : parts) {
        p.release();
      }
    }
    return this;
  }

  /**
   * The whole body as one buffer (network-common's encoder path: TLS). The slices are views
   * of the mappings; this answer's references keep them valid until it is released.
   */
  @Override
  public Object convertToNetty() {
    CompositeByteBuf all = Unpooled.compositeBuffer(parts.size() + 1);
    all.addComponent(true, prefix.retainedDuplicate());
    for (RegionSliceBuffer p : parts) {
      all.addComponent(true, (ByteBuf) p.convertToNetty());
    }
    return all;
  }

  @Override
  public void operationComplete(ChannelFuture future) {
    release();
  }
}
