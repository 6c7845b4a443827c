/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

import io.netty.buffer.ByteBuf;

/**
 * The served file: every 8-byte word holds its own offset, so a client can check that each
 * block it got is the block it asked for (first and last word) without keeping a copy.
 */
final class PatternFile {
  private PatternFile() {}

  static File create(File f, long length) throws IOException {
    if (f.length() == length) {
      return f;
    }
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
      for (long pos = 0; pos < length; ) {
        buf.clear();
        while (buf.remaining() >= 8 && pos + buf.position() < length) {
          buf.putLong(pos + buf.position());
        }
        buf.flip();
        pos += ch.write(buf);
      }
    }
    return f;
  }

  /** Null when {@code block} is the file's bytes at {@code offset}, else what differs. */
  static String check(ByteBuffer block, long offset, int length) {
    int p = block.position();
    return block.remaining() != length ? sizeProblem(block.remaining(), length)
        : wordProblem(block.getLong(p), block.getLong(p + length - 8), offset, length);
  }

  /** As {@link #check(ByteBuffer, long, int)}, for a Netty buffer's readable bytes. */
  static String check(ByteBuf block, long offset, int length) {
    int p = block.readerIndex();
    return block.readableBytes() != length ? sizeProblem(block.readableBytes(), length)
        : wordProblem(block.getLong(p), block.getLong(p + length - 8), offset, length);
  }

  private static String sizeProblem(int got, int length) {
    return "got " + got + " bytes, asked for " + length;
  }

  private static String wordProblem(long first, long last, long offset, int length) {
    return first == offset && last == offset + length - 8 ? null
        : "block at " + offset + " holds words " + first + " .. " + last;
  }

  /** Offset of the i-th block of {@code size} bytes, wrapping inside a file of {@code length}. */
  static long offsetOf(long i, int size, long length) {
    long slots = length / size;
    return (i % slots) * size;
  }
}
