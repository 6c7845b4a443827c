/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;

/**
 * A registered region on the tcp transport. Reference counted: the registration holds one
 * reference and every serve in progress holds one, so deregistration completes only after
 * the last write from this memory ended.
 */
final class TcpRegion implements RegisteredRegion {
  private final int key;
  private final ByteBuffer memory;
  private final AtomicInteger refs = new AtomicInteger(1);
  private final CompletableFuture<Void> released = new CompletableFuture<>();
  private final BackingCheck backing;
  private volatile boolean live = true;

  TcpRegion(int key, ByteBuffer memory, BackingCheck backing) {
    this.key = key;
    this.memory = memory;
    this.backing = backing;
  }

  BackingCheck backing() {
    return backing;
  }

  @Override
  public long address() {
    return 0L;
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

  /** A read-only view of [address, address + length); the caller holds a reference. */
  ByteBuffer slice(long address, int length) {
    ByteBuffer dup = memory.duplicate();
    dup.position((int) address).limit((int) address + length);
    return dup.slice().asReadOnlyBuffer();
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
