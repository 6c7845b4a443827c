/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.Set;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import org.apache.spark.shuffle.rdma.transport.verbs.BuddyAllocator;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;

/**
 * Where RDMA READs land: one direct buffer registered once (LOCAL_WRITE, the access a READ
 * destination needs) and carved by a buddy allocator. Nothing is registered on the read
 * path; a released buffer goes back to the allocator and wakes channels waiting for memory.
 * A read that waited too long for it lands in an {@link OverflowLanding} instead.
 */
final class ReceivePool {
  private final ByteBuffer arena;
  /**
   * A duplicate of the arena moved to each completed read's bytes and sliced there (guarded
   * by itself): one view object per read instead of a duplicate and a slice (Java 11 has no
   * {@code slice(index, length)}, which the plugin's 3.5 lines compile for).
   */
  private final ByteBuffer cursor;
  private final long address;
  private final IbvMr mr;
  private final BuddyAllocator allocator;
  private final Set<VerbsChannel> hungry = ConcurrentHashMap.newKeySet();
  private final PooledManagedBuffer.Recycler recycler = this::recycle;
  private final IbvPd pd;
  /** Reads that landed outside the pool and are not released yet (deregistered at close). */
  private final Set<OverflowLanding> overflows = ConcurrentHashMap.newKeySet();
  /**
   * Blocks allocated to reads not yet completed: memory that comes back without any task
   * consuming anything. While there are some, a read waiting for memory is not stuck.
   */
  private final AtomicLong posted = new AtomicLong();

  ReceivePool(IbvPd pd, long configuredBytes) throws IOException {
    this.pd = pd;
    long size = BuddyAllocator.arenaSizeFor(configuredBytes);
    this.arena = ByteBuffer.allocateDirect((int) size);
    this.cursor = arena.duplicate();
    this.address = MemoryUtils.getAddress(arena);
    SVCRegMr reg = pd.regMr(address, (int) size, IbvMr.IBV_ACCESS_LOCAL_WRITE).execute();
    this.mr = reg.getMr();
    reg.free();
    this.allocator = new BuddyAllocator(size);
  }

  /**
   * A pool over memory registered with no device: the reducer cost benchmark (issue 28,
   * integration-tests/benchmarks/client-cost) drives the read path's Java side (allocation,
   * the buffers handed to Spark, their recycling) without an RDMA NIC, where a "NIC" copies
   * each read into {@link #arena}. {@link #lkey}, {@link #address}, {@link #overflow} and
   * {@link #deregister} must not be called on it.
   */
  ReceivePool(long configuredBytes) {
    this.pd = null;
    long size = BuddyAllocator.arenaSizeFor(configuredBytes);
    this.arena = ByteBuffer.allocateDirect((int) size);
    this.cursor = arena.duplicate();
    this.address = 0;
    this.mr = null;
    this.allocator = new BuddyAllocator(size);
  }

  /** The pool's memory, for the benchmark's "NIC" (see {@link #ReceivePool(long)}). */
  ByteBuffer arena() {
    return arena;
  }

  int lkey() {
    return mr.getLkey();
  }

  long address() {
    return address;
  }

  long capacity() {
    return allocator.capacity();
  }

  boolean fits(int length) {
    return allocator.fits(length);
  }

  /** Offset of a block for {@code length} bytes, or -1 (then {@code waiter} is woken later). */
  long allocate(int length, VerbsChannel waiter) {
    long off = allocator.allocate(length);
    if (off < 0) {
      hungry.add(waiter);
      // A release may have happened between the failed allocation and registering.
      off = allocator.allocate(length);
      if (off >= 0) {
        hungry.remove(waiter);
      }
    }
    if (off >= 0) {
      posted.incrementAndGet();
    }
    return off;
  }

  /**
   * True while some pool memory belongs to reads still on the wire: it comes back by itself.
   * When none does, all of it is held by fetched blocks tasks have not released.
   */
  boolean memoryComing() {
    return posted.get() > 0;
  }

  /**
   * Memory of its own for a read that waited too long for the pool (see {@link
   * org.apache.spark.shuffle.rdma.transport.verbs.PoolWait}).
   */
  OverflowLanding overflow(int length) throws IOException {
    OverflowLanding landing = OverflowLanding.register(this, pd, length);
    overflows.add(landing);
    return landing;
  }

  void forget(OverflowLanding landing) {
    overflows.remove(landing);
  }

  /** The completed read's bytes as a buffer the callee may retain. */
  PooledManagedBuffer buffer(long offset, int length) {
    posted.decrementAndGet();
    ByteBuffer view;
    synchronized (cursor) {
      cursor.limit((int) offset + length).position((int) offset);
      view = cursor.slice();
    }
    return new PooledManagedBuffer(view, offset, recycler);
  }

  /** Gives back a block whose read failed (no buffer was handed out). */
  void free(long offset) {
    posted.decrementAndGet();
    recycle(offset);
  }

  private void recycle(long offset) {
    allocator.free(offset);
    if (!hungry.isEmpty()) {
      for (VerbsChannel ch : hungry) {
        hungry.remove(ch);
        ch.pump();
      }
    }
  }

  void deregister() throws IOException {
    for (OverflowLanding o : overflows) {
      o.release();
    }
    mr.deregMr().execute().free();
  }
}
