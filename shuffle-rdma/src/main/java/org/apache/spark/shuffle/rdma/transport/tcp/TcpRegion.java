/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;

/**
 * A registered region on the tcp transport. Reference counted: the registration holds one
 * reference and every serve in progress holds one, so deregistration completes only after
 * the last write from this memory (or its file) ended.
 *
 * <p>Serving allocates no copy of the bytes: a read is a Netty slice of one read-only
 * {@link ByteBuf} view of the mapping, made once here, or (at least the sendfile threshold
 * long, file-backed regions only) a file region of the descriptor opened at registration,
 * which names the same file (inode) as the mapping even if its path is replaced later.
 */
final class TcpRegion implements RegisteredRegion {
  /** Offsets within a region fit in 32 bits (regions are at most 1 GiB). */
  static final long MAX_OFFSET = 0xFFFFFFFFL;

  private final int key;
  /** Address of the region's first byte: random upper bits, lower 32 bits zero. */
  private final long base;
  private final ByteBuffer memory;
  /** Read-only, unreleasable view of all of memory; serves take slices of it. */
  private final ByteBuf view;
  /** Open on the mapped file while registered, or null (no sendfile for this region). */
  private final FileChannel file;
  private final long fileOffset;
  private final AtomicInteger refs = new AtomicInteger(1);
  private final CompletableFuture<Void> released = new CompletableFuture<>();
  private final BackingCheck backing;
  private volatile boolean live = true;

  TcpRegion(int key, long base, ByteBuffer memory, BackingCheck backing, FileChannel file,
      long fileOffset) {
    this.key = key;
    this.base = base;
    this.memory = memory;
    ByteBuffer ro = memory.duplicate();
    ro.position(0).limit(memory.limit());
    this.view = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(ro.asReadOnlyBuffer()));
    this.backing = backing;
    this.file = file;
    this.fileOffset = fileOffset;
  }

  BackingCheck backing() {
    return backing;
  }

  @Override
  public long address() {
    return base;
  }

  @Override
  public long length() {
    return memory.limit();
  }

  @Override
  public int key() {
    return key;
  }

  @Override
  public boolean isLive() {
    return live;
  }

  /** A read-only view of [offset, offset + length); the caller holds a reference. */
  ByteBuffer slice(long offset, int length) {
    ByteBuffer dup = memory.duplicate();
    dup.position((int) offset).limit((int) offset + length);
    return dup.slice().asReadOnlyBuffer();
  }

  /**
   * [offset, offset + length) as a Netty buffer over the mapping (no copy); releasing it
   * does nothing, the caller holds a region reference until the write ended.
   */
  ByteBuf nettySlice(long offset, int length) {
    return view.slice((int) offset, length);
  }

  /** The descriptor for sendfile, or null. */
  FileChannel file() {
    return file;
  }

  /** File offset of the region's first byte. */
  long fileOffset() {
    return fileOffset;
  }

  /** Takes a reference for a serve; false when the region is already revoked. */
  boolean tryRetain() {
    while (true) {
      int r = refs.get();
      if (r <= 0 || !live) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  void release() {
    if (refs.decrementAndGet() == 0) {
      if (file != null) {
        try {
          file.close();
        } catch (IOException ignored) {
          // read-only descriptor: nothing to flush, nothing lost
        }
      }
      released.complete(null);
    }
  }

  /** Revokes once; the future completes when no serve references the memory any more. */
  CompletableFuture<Void> revoke() {
    synchronized (this) {
      if (live) {
        live = false;
        release();
      }
    }
    return released;
  }
}
