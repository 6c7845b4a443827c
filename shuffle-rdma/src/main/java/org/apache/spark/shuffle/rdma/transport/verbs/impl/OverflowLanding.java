/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;

/**
 * Where one read lands when the receive pool had no memory for it in time
 * (spark.shuffle.rdma.verbs.poolWait): a direct buffer of its own, registered for that read
 * (LOCAL_WRITE) and deregistered when the last reference to the fetched block goes (or when
 * the read fails, or the transport closes). The memory is what Spark's own fetcher would
 * hold for the same block; it is freed by the garbage collector after deregistration.
 */
final class OverflowLanding {
  private final ByteBuffer memory;
  private final long address;
  private final IbvMr mr;
  private final AtomicBoolean deregistered = new AtomicBoolean();
  private final ReceivePool pool;

  private OverflowLanding(ReceivePool pool, ByteBuffer memory, long address, IbvMr mr) {
    this.pool = pool;
    this.memory = memory;
    this.address = address;
    this.mr = mr;
  }

  static OverflowLanding register(ReceivePool pool, IbvPd pd, int length) throws IOException {
    ByteBuffer memory = ByteBuffer.allocateDirect(length);
    long address = MemoryUtils.getAddress(memory);
    SVCRegMr reg = pd.regMr(address, length, IbvMr.IBV_ACCESS_LOCAL_WRITE).execute();
    IbvMr mr = reg.getMr();
    reg.free();
    return new OverflowLanding(pool, memory, address, mr);
  }

  long address() {
    return address;
  }

  int lkey() {
    return mr.getLkey();
  }

  /** The completed read's bytes; releasing the last reference deregisters this landing. */
  PooledManagedBuffer buffer(int length) {
    ByteBuffer view = memory.duplicate();
    view.limit(length).position(0);
    return new PooledManagedBuffer(view.slice(), 0, ignored -> release());
  }

  /** Deregisters once (a failed read, the last release, or the transport closing). */
  void release() {
    if (deregistered.compareAndSet(false, true)) {
      pool.forget(this);
      try {
        mr.deregMr().execute().free();
      } catch (IOException e) {
        // The device or protection domain is already gone: nothing stays registered.
      }
    }
  }
}
