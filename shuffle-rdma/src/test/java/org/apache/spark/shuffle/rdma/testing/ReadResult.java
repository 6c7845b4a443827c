/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/** Collects one read's outcome: the bytes (copied out of the transport's buffer) or the failure. */
public final class ReadResult implements ReadCallback {
  public final CompletableFuture<byte[]> future = new CompletableFuture<>();

  @Override
  public void onSuccess(ReadRequest request, ManagedBuffer data) {
    try {
      future.complete(bytesOf(data));
    } catch (IOException e) {
      future.completeExceptionally(e);
    }
  }

  @Override
  public void onFailure(ReadRequest request, Throwable cause) {
    future.completeExceptionally(cause);
  }

  /** A copy of the buffer's readable bytes. */
  public static byte[] bytesOf(ManagedBuffer data) throws IOException {
    ByteBuffer b = data.nioByteBuffer();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /** Reads [address, +length) of region {@code key} and waits for the bytes (or throws). */
  public static byte[] read(TransportChannel channel, long address, int key, int length)
      throws Exception {
    ReadResult r = new ReadResult();
    channel.read(List.of(new ReadRequest(address, key, length, r, null)));
    return r.future.get(60, TimeUnit.SECONDS);
  }
}
