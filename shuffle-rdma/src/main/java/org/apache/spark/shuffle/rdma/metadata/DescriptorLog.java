/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Driver side: one shuffle's descriptor table as an append-only byte log of records
 * (see {@link DescriptorCodec#record}). Each record is encoded once, when it is published,
 * and never again: the log is kept in chunks of {@link #CHUNK_BYTES}, a full chunk is
 * immutable and goes into every reply that covers it as the same array, and only the
 * unfilled last chunk is copied, once per version, into an immutable snapshot.
 *
 * <p>A version is a byte offset into the log. An executor that holds the table up to
 * offset {@code v} asks for {@link #since(long) since(v)} and gets just the records
 * appended after it, so a refresh costs what changed, not the whole table.
 *
 * <p>Heap: the encoded bytes, plus at most one partly filled chunk and its snapshot
 * (each grown by doubling, at most {@link #CHUNK_BYTES}), plus 16 bytes per chunk.
 *
 * <p>Thread safety: every method is synchronized and O(chunks) at most, so a reply
 * (serialized and sent outside the lock) never holds up a publish.
 */
public final class DescriptorLog {
  /** Small enough to stay a regular (not humongous) G1 object; large enough for few chunks. */
  static final int CHUNK_BYTES = 256 << 10;
  private static final byte[] EMPTY = new byte[0];

  /** Full chunks, each exactly CHUNK_BYTES long, never written again. */
  private final List<byte[]> full = new ArrayList<>();
  /** The chunk being filled; its first {@code tailLength} bytes are log bytes. */
  private byte[] tail = new byte[256];
  private int tailLength;
  /** Immutable copy of tail[0, tailLength) for replies; null when stale. */
  private byte[] tailSnapshot = EMPTY;
  private long records;

  /** Appends one encoded record. */
  public synchronized void append(byte[] record) {
    int at = 0;
    while (at < record.length) {
      if (tailLength == tail.length && tail.length < CHUNK_BYTES) {
        tail = Arrays.copyOf(tail, Math.min(CHUNK_BYTES,
            Math.max(tail.length * 2, tailLength + record.length - at)));
      }
      int n = Math.min(record.length - at, tail.length - tailLength);
      System.arraycopy(record, at, tail, tailLength, n);
      tailLength += n;
      at += n;
      if (tailLength == CHUNK_BYTES) {
        full.add(tail);
        tail = new byte[256];
        tailLength = 0;
      }
    }
    tailSnapshot = null;
    records++;
  }

  /** Log length in bytes: the current version. */
  public synchronized long length() {
    return (long) full.size() * CHUNK_BYTES + tailLength;
  }

  public synchronized long records() {
    return records;
  }

  /**
   * The records after byte offset {@code from} (a version this log returned before, or 0),
   * as chunks to read in order. A {@code from} beyond the end (the executor saw a log the
   * driver has since forgotten) is answered from 0; the slice says where it starts.
   */
  public synchronized Slice since(long from) {
    long end = length();
    if (from < 0 || from > end) {
      from = 0;
    }
    List<byte[]> chunks = new ArrayList<>();
    int first = (int) (from / CHUNK_BYTES);
    int offset = (int) (from % CHUNK_BYTES);
    for (int i = first; i < full.size(); i++) {
      byte[] c = full.get(i);
      // Only a slice that starts inside a chunk is copied (at most CHUNK_BYTES).
      chunks.add(i == first && offset > 0 ? Arrays.copyOfRange(c, offset, c.length) : c);
    }
    if (tailLength > 0) {
      if (tailSnapshot == null) {
        tailSnapshot = Arrays.copyOf(tail, tailLength);
      }
      int tailFrom = first == full.size() ? offset : 0;
      if (tailFrom < tailLength) {
        chunks.add(tailFrom == 0 ? tailSnapshot
            : Arrays.copyOfRange(tailSnapshot, tailFrom, tailLength));
      }
    }
    return new Slice(from, end, chunks.toArray(new byte[0][]));
  }

  /** Records [from, to) of the log, as chunks whose concatenation is those bytes. */
  public static final class Slice {
    public final long from;
    public final long to;
    public final byte[][] chunks;

    Slice(long from, long to, byte[][] chunks) {
      this.from = from;
      this.to = to;
      this.chunks = chunks;
    }

    public long bytes() {
      long n = 0;
      for (byte[] c : chunks) {
        n += c.length;
      }
      return n;
    }
  }
}
