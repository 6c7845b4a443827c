/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * Streams the pieces of one block into a file in block order while they complete in any
 * order: a piece that arrives early is kept (retained, not copied) until the pieces before it
 * are written, so at most the pieces in flight are ever held, never the whole block. Spark's
 * download channel may encrypt, so it must see the bytes exactly once and in order.
 * Thread-safe; after {@link #abort} nothing more is written.
 */
public final class OrderedPieceWriter {
  private final WritableByteChannel out;
  private final int pieces;
  private final Consumer<ByteBuffer> observer;
  private final Map<Integer, ManagedBuffer> early = new HashMap<>();
  private int next;
  private long written;
  private boolean aborted;

  public OrderedPieceWriter(WritableByteChannel out, int pieces) {
    this(out, pieces, null);
  }

  /**
   * @param observer sees each piece's bytes in block order just before they are written (the
   *     reader's checksum verification); may be null
   */
  public OrderedPieceWriter(WritableByteChannel out, int pieces, Consumer<ByteBuffer> observer) {
    this.out = out;
    this.pieces = pieces;
    this.observer = observer;
  }

  /**
   * Takes piece {@code index}: writes it and every kept piece that now follows in order, or
   * keeps it (calling {@code data.retain()}) when an earlier one is missing. Returns true once
   * every piece is written. The caller keeps its own reference to {@code data}.
   */
  public synchronized boolean accept(int index, ManagedBuffer data) throws IOException {
    if (aborted) {
      return false;
    }
    if (index < next || index >= pieces || early.containsKey(index)) {
      throw new IllegalStateException("piece " + index + " of " + pieces
          + " delivered twice or out of range (next to write: " + next + ")");
    }
    if (index != next) {
      data.retain();
      early.put(index, data);
      return false;
    }
    write(data);
    next++;
    ManagedBuffer kept;
    while ((kept = early.remove(next)) != null) {
      try {
        write(kept);
      } finally {
        kept.release();
      }
      next++;
    }
    return next == pieces;
  }

  private void write(ManagedBuffer data) throws IOException {
    ByteBuffer src = data.nioByteBuffer();
    if (observer != null) {
      observer.accept(src.duplicate());
    }
    while (src.hasRemaining()) {
      written += out.write(src);
    }
  }

  /** Bytes written so far. */
  public synchronized long written() {
    return written;
  }

  /** Pieces held because an earlier one is still missing. */
  public synchronized int held() {
    return early.size();
  }

  /** Stops writing and releases every kept piece; idempotent. */
  public synchronized void abort() {
    aborted = true;
    for (ManagedBuffer b : early.values()) {
      b.release();
    }
    early.clear();
  }
}
