/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.nio.ByteBuffer;

import io.netty.buffer.Unpooled;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.SlicedManagedBuffer;

/**
 * One block's bytes inside the buffer of a READ that covered several adjacent blocks. No
 * copy: references are the whole READ's, so its memory (a Netty buffer, a slice of the verbs
 * receive pool) lives until every block Spark retained is released.
 */
final class BlockSlice extends SlicedManagedBuffer {
  private final ManagedBuffer whole;

  /** @param wholeBytes {@code whole}'s bytes (position 0); the slice is [offset, offset+length) */
  BlockSlice(ManagedBuffer whole, ByteBuffer wholeBytes, int offset, int length) {
    super(slice(wholeBytes, offset, length));
    this.whole = whole;
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
    return Unpooled.copiedBuffer(bytes());
  }

  @Override
  public String toString() {
    return "BlockSlice(" + size() + " bytes of " + whole + ")";
  }
}
