/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Writes the fields of one message, big-endian, in the layout WireReader reads. */
final class WireWriter {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
  private final DataOutputStream out = new DataOutputStream(bytes);

  WireWriter u8(int v) {
    return run(() -> out.writeByte(v));
  }

  WireWriter u16(int v) {
    return run(() -> out.writeShort(v));
  }

  WireWriter i32(int v) {
    return run(() -> out.writeInt(v));
  }

  WireWriter i64(long v) {
    return run(() -> out.writeLong(v));
  }

  WireWriter string(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) {
      throw new IllegalArgumentException("string of " + b.length + " bytes");
    }
    return u16(b.length).run(() -> out.write(b));
  }

  WireWriter bytes(byte[] b) {
    return i32(b.length).run(() -> out.write(b));
  }

  byte[] toBytes() {
    return bytes.toByteArray();
  }

  private interface Io {
    void run() throws IOException;
  }

  private WireWriter run(Io io) {
    try {
      io.run();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array stream does not fail
    }
    return this;
  }
}
