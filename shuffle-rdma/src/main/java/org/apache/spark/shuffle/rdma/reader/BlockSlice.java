/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.InputStream;
import java.nio.ByteBuffer;

import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.compat.CompatManagedBuffer;

/**
 * One block's bytes inside the buffer of a READ that covered several adjacent blocks. No
 * copy: references are the whole READ's, so its memory (a Netty buffer, a slice of the verbs
 * receive pool) lives until every block Spark retained is released.
 */
final class BlockSlice extends CompatManagedBuffer {
  private final ManagedBuffer whole;
  private final ByteBuffer bytes;

  /** @param wholeBytes {@code whole}'s bytes (position 0); the slice is [offset, offset+length) */
  BlockSlice(ManagedBuffer whole, ByteBuffer wholeBytes, int offset, int length) {
    this.whole = whole;
    ByteBuffer b = wholeBytes.duplicate();
    b.position(offset).limit(offset + length);
    this.bytes = b.slice();
  }

  @Override
  public long size() {
    return bytes.remaining();
  }

  @Override
  public ByteBuffer nioByteBuffer() {
    return bytes.duplicate();
  }

  @Override
  public InputStream createInputStream() {
    return new ByteBufInputStream(Unpooled.wrappedBuffer(bytes.duplicate()));
  }

  @Override
  public ManagedBuffer retain() {
    whole.retain();
    return this;
  }

  @Override
  public ManagedBuffer release() {
    whole.release();
    return this;
  }

  /** A copy: a Netty view would outlive the references this slice accounts for. */
  @Override
  public Object convertToNetty() {
    return Unpooled.copiedBuffer(bytes.duplicate());
  }

  @Override
  public String toString() {
    return "BlockSlice(" + bytes.remaining() + " bytes of " + whole + ")";
  }
}
