/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

/**
 * One one-sided read: {@code length} bytes at {@code remoteAddress} of the region that
 * {@code key} names. {@code attachment} is the caller's and comes back with the completion so
 * callers need no lookup map.
 *
 * <p>Unchanged while posted. Its owner may reuse it ({@link #reset}) once its callback has
 * returned: a channel calls the callback exactly once per posting and never touches the
 * request after that call (the reader reuses the requests of its one-READ blocks, so that a
 * block costs no request object).
 */
public final class ReadRequest {
  private long remoteAddress;
  private int key;
  private int length;
  private ReadCallback callback;
  private Object attachment;

  public ReadRequest(long remoteAddress, int key, int length, ReadCallback callback,
      Object attachment) {
    reset(remoteAddress, key, length, callback, attachment);
  }

  /** A request to reuse: {@link #reset} it before posting it. */
  public ReadRequest() {}

  /** This request, now naming another read; only while no channel holds it (see above). */
  public ReadRequest reset(long remoteAddress, int key, int length, ReadCallback callback,
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
    return this;
  }

  /** Drops the callback and attachment of a request kept for reuse (nothing kept alive). */
  public void clear() {
    this.callback = null;
    this.attachment = null;
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
