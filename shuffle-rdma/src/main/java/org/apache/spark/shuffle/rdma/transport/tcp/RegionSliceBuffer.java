/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.SlicedManagedBuffer;

/**
 * The answer to one served read: a slice of the registered (mapped) memory, written by
 * Netty straight from the mapping (no copy into a user-space buffer). Netty's message
 * encoder releases it after the write, which drops the serve's region reference.
 */
final class RegionSliceBuffer extends SlicedManagedBuffer {
  private final TcpRegion region;
  private final AtomicBoolean released = new AtomicBoolean();

  RegionSliceBuffer(TcpRegion region, ByteBuffer slice) {
    super(slice);
    this.region = region;
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
    return Unpooled.wrappedBuffer(bytes());
  }
}
