/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.DefaultFileRegion;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.compat.CompatManagedBuffer;

/**
 * The answer to one served read: [offset, offset + length) of a registered region,
 * written by Netty straight from the mapping or the file (no copy into a user-space
 * buffer). Holds one region reference, dropped once the write ended: by
 * {@link ServeEncoder} (this is the write's listener) or, on connections that take
 * network-common's own encoder path, when its message is released after the write. Not a
 * {@code SlicedManagedBuffer}: the view is made only when asked (nioByteBuffer, the input
 * stream), so serving a read allocates no ByteBuffer.
 */
final class RegionSliceBuffer extends CompatManagedBuffer implements ChannelFutureListener {
  private final TcpRegion region;
  private final long offset;
  private final int length;
  private final AtomicBoolean released = new AtomicBoolean();

  RegionSliceBuffer(TcpRegion region, long offset, int length) {
    this.region = region;
    this.offset = offset;
    this.length = length;
  }

  @Override
  public long size() {
    return length;
  }

  @Override
  public ByteBuffer nioByteBuffer() {
    return region.slice(offset, length);
  }

  @Override
  public InputStream createInputStream() {
    return new ByteBufInputStream(Unpooled.wrappedBuffer(nioByteBuffer()));
  }

  @Override
  public ManagedBuffer retain() {
    throw new UnsupportedOperationException("served slices are owned by one write");
  }

  @Override
  public ManagedBuffer release() {
    if (released.compareAndSet(false, true)) {
      region.release();
    }
    return this;
  }

  @Override
  public Object convertToNetty() {
    return region.nettySlice(offset, length);
  }

  /**
   * The body to write: a file region of the registered file (sendfile) when the region has
   * one, {@code sendfileOk} and the read is at least {@code threshold} long; else a slice of
   * the mapping. Releasing either does not touch the region (this buffer's reference does).
   */
  Object nettyBody(boolean sendfileOk, long threshold) {
    FileChannel file = region.file();
    if (sendfileOk && file != null && threshold > 0 && length >= threshold) {
      return new SharedFileRegion(file, region.fileOffset() + offset, length);
    }
    return region.nettySlice(offset, length);
  }

  /** The write of this answer ended (sent, failed or dropped with the connection). */
  @Override
  public void operationComplete(ChannelFuture future) {
    release();
  }

  /** A file region over the region's descriptor, which the region (not the write) closes. */
  static final class SharedFileRegion extends DefaultFileRegion {
    SharedFileRegion(FileChannel file, long position, long count) {
      super(file, position, count);
    }

    @Override
    protected void deallocate() {
      // The descriptor belongs to the TcpRegion and outlives this write.
    }
  }
}
