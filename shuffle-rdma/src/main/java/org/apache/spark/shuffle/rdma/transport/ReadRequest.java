/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

/**
 * One one-sided read: {@code length} bytes at {@code remoteAddress} of the region that
 * {@code key} names. Immutable; {@code attachment} is the caller's and comes back with
 * the completion so callers need no lookup map.
 */
public final class ReadRequest {
  private final long remoteAddress;
  private final int key;
  private final int length;
  private final ReadCallback callback;
  private final Object attachment;

  public ReadRequest(long remoteAddress, int key, int length, ReadCallback callback,
      Object attachment) {
    if (length <= 0) {
      throw new IllegalArgumentException("read length must be positive: " + length);
    }
    if (callback == null) {
      throw new IllegalArgumentException("read callback must not be null");
    }
    this.remoteAddress = remoteAddress;
    this.key = key;
    this.length = length;
    this.callback = callback;
    this.attachment = attachment;
  }

  public long remoteAddress() {
    return remoteAddress;
  }

  public int key() {
    return key;
  }

  public int length() {
    return length;
  }

  public ReadCallback callback() {
    return callback;
  }

  public Object attachment() {
    return attachment;
  }

  @Override
  public String toString() {
    return "read(addr=0x" + Long.toHexString(remoteAddress) + ", key=0x"
        + Integer.toHexString(key) + ", len=" + length + ")";
  }
}
