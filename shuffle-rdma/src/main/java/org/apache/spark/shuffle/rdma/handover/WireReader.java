/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Reads the fields of one message, each checked against the bytes left: a short message is
 * refused naming the field it ends in, never read past its end.
 */
final class WireReader {
  private final ByteBuffer in;

  WireReader(byte[] message) {
    this.in = ByteBuffer.wrap(message); // big-endian
  }

  private void need(int bytes, String field) throws ProtocolException {
    if (in.remaining() < bytes) {
      throw new ProtocolException("message truncated: " + field + " needs " + bytes
          + " bytes, " + in.remaining() + " left of " + in.limit());
    }
  }

  byte u8(String field) throws ProtocolException {
    need(1, field);
    return in.get();
  }

  short u16(String field) throws ProtocolException {
    need(2, field);
    return in.getShort();
  }

  int i32(String field) throws ProtocolException {
    need(4, field);
    return in.getInt();
  }

  long i64(String field) throws ProtocolException {
    need(8, field);
    return in.getLong();
  }

  /** A string: u16 length, then that many bytes of UTF-8, at most {@code max}. */
  String string(String field, int max) throws ProtocolException {
    int n = u16(field + " length") & 0xffff;
    if (n > max) {
      throw new ProtocolException(field + " is " + n + " bytes, at most " + max + " allowed");
    }
    need(n, field);
    byte[] b = new byte[n];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  byte[] bytes(String field, int max) throws ProtocolException {
    int n = i32(field + " length");
    if (n < 0 || n > max) {
      throw new ProtocolException(field + " is " + n + " bytes, at most " + max + " allowed");
    }
    need(n, field);
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  /** Refuses bytes after the last field: a message of another layout or version. */
  void end(String what) throws ProtocolException {
    if (in.hasRemaining()) {
      throw new ProtocolException(what + " has " + in.remaining() + " bytes after its last "
          + "field (" + in.limit() + " in all)");
    }
  }
}
