/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.InputStream;
import java.nio.ByteBuffer;

import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import org.apache.spark.shuffle.rdma.compat.CompatManagedBuffer;

/**
 * A {@code ManagedBuffer} that is a view (no copy) of bytes whose memory another object owns:
 * a served slice of a registered mapping (tcp), one block inside a coalesced READ's buffer
 * (reader). The bytes' accessors live here; what retain, release and the Netty form mean is
 * the owner's business, in the subclass.
 */
public abstract class SlicedManagedBuffer extends CompatManagedBuffer {
  private final ByteBuffer bytes;

  /** @param bytes exactly the view's bytes (position 0, limit = length) */
  protected SlicedManagedBuffer(ByteBuffer bytes) {
    this.bytes = bytes;
  }

  /** [offset, offset + length) of {@code whole} (its position ignored) as a view. */
  protected static ByteBuffer slice(ByteBuffer whole, int offset, int length) {
    ByteBuffer b = whole.duplicate();
    b.position(offset).limit(offset + length);
    return b.slice();
  }

  /** The view's bytes, a duplicate the caller may move. */
  protected final ByteBuffer bytes() {
    return bytes.duplicate();
  }

  @Override
  public long size() {
    return bytes.remaining();
  }

  @Override
  public ByteBuffer nioByteBuffer() {
    return bytes();
  }

  @Override
  public InputStream createInputStream() {
    return new ByteBufInputStream(Unpooled.wrappedBuffer(bytes()));
  }
}
