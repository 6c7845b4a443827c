/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.compat.CompatManagedBuffer;

/**
 * The bytes of one completed RDMA READ, a slice of the registered receive pool. Reference
 * counted: the transport holds one reference during the callback; a callee that keeps the
 * data calls {@link #retain()} and later {@link #release()}. The last release hands the
 * slice back to the pool (no deregistration, the pool stays registered).
 */
public final class PooledManagedBuffer extends CompatManagedBuffer {

  /** What to do with the slice when the last reference goes. */
  @FunctionalInterface
  public interface Recycler {
    void recycle(long offset);
  }

  private final ByteBuffer data;
  private final long offset;
  private final Recycler recycler;
  /** The reference count in a field of its own, not an AtomicInteger: one object per READ less. */
  private static final AtomicIntegerFieldUpdater<PooledManagedBuffer> REFS =
      AtomicIntegerFieldUpdater.newUpdater(PooledManagedBuffer.class, "refs");
  private volatile int refs = 1;

  /** @param data exactly the read's bytes (position 0, limit = length) */
  public PooledManagedBuffer(ByteBuffer data, long offset, Recycler recycler) {
    this.data = data;
    this.offset = offset;
    this.recycler = recycler;
  }

  @Override
  public long size() {
    return data.remaining();
  }

  @Override
  public ByteBuffer nioByteBuffer() {
    checkLive();
    return data.duplicate();
  }

  @Override
  public InputStream createInputStream() {
    checkLive();
    return new ByteBufInputStream(Unpooled.wrappedBuffer(data.duplicate()));
  }

  @Override
  public ManagedBuffer retain() {
    int r;
    do {
      r = refs;
      if (r <= 0) {
        throw new IllegalStateException("buffer already released to the receive pool");
      }
    } while (!REFS.compareAndSet(this, r, r + 1));
    return this;
  }

  @Override
  public ManagedBuffer release() {
    int r = REFS.decrementAndGet(this);
    if (r == 0) {
      recycler.recycle(offset);
    } else if (r < 0) {
      REFS.incrementAndGet(this);
      throw new IllegalStateException("buffer released more often than retained");
    }
    return this;
  }

  /** References held now (for tests and leak checks). */
  public int refCount() {
    return refs;
  }

  @Override
  public Object convertToNetty() {
    checkLive();
    return Unpooled.wrappedBuffer(data.duplicate());
  }


  private void checkLive() {
    if (refs <= 0) {
      throw new IllegalStateException("buffer already released to the receive pool");
    }
  }
}
