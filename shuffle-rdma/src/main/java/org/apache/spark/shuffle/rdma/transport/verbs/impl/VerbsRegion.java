/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import com.ibm.disni.verbs.IbvMr;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;

/** A registered map output: its virtual address and rkey are what peers READ with. */
final class VerbsRegion implements RegisteredRegion {
  private final long address;
  private final long length;
  private final int rkey;
  final IbvMr mr;
  /** Registered from a PRIVATE mapping: the kernel pinned private copies of its pages. */
  final boolean copied;
  private volatile boolean live = true;

  VerbsRegion(long address, long length, IbvMr mr, boolean copied) {
    this.copied = copied;
    this.address = address;
    this.length = length;
    this.rkey = mr.getRkey(); // never the lkey: only the rkey authorizes remote access
    this.mr = mr;
  }

  @Override
  public long address() {
    return address;
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public int key() {
    return rkey;
  }

  @Override
  public boolean isLive() {
    return live;
  }

  /** Marks the region dead; true for the caller that did it. */
  synchronized boolean kill() {
    if (!live) {
      return false;
    }
    live = false;
    return true;
  }

  @Override
  public String toString() {
    return "region(addr=0x" + Long.toHexString(address) + ", len=" + length + ", rkey=0x"
        + Integer.toHexString(rkey) + ")";
  }
}
