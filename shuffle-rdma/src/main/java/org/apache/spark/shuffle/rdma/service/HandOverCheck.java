/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;

/**
 * What the service checks before it registers handed-over files: each descriptor is open
 * for reading (the service opens the file again with its own rights, so a descriptor that
 * needed no read permission, O_PATH or write-only, is refused) and is a regular file, the index holds (partitions + 1) offsets that start at 0, never decrease and
 * end at the data file's length, and a checksum file holds one long per partition. An
 * executor's own registry trusts its own files; the service serves files another process
 * passed, so a file that would make readers fetch wrong ranges is refused here, naming it.
 */
final class HandOverCheck {
  /** Largest index read for the check: 8 Mi partitions (Spark's own limit is lower). */
  static final long MAX_INDEX = 64L << 20;
  private static final String[] ROLES = {"data", "index", "checksum"};

  private HandOverCheck() {}

  /** Null when the files fit the request; else the refusal, one line. */
  static String problem(HandOverRequest req, int[] fds) throws IOException {
    long[] sizes = new long[fds.length];
    for (int i = 0; i < fds.length; i++) {
      long[] st = Fds.stat(fds[i]);
      // First: the service may open the file again with its own rights (/proc/self/fd/N),
      // so the sender must prove it can read it; an O_PATH descriptor proves nothing.
      if (!Fds.openForReading(st[2])) {
        return "the " + ROLES[i] + " descriptor is not open for reading (O_PATH or "
            + "write-only, flags 0" + Long.toOctalString(st[2]) + "): pass descriptors "
            + "opened read-only";
      }
      if (st[0] != Fds.REGULAR_FILE) {
        return "the " + ROLES[i] + " descriptor is " + typeName(st[0])
            + ", not a regular file: pass the committed shuffle files";
      }
      sizes[i] = st[1];
    }
    long partitions = req.partitions();
    long indexLength = 8L * (partitions + 1);
    if (sizes[1] != indexLength) {
      return "the index file has " + sizes[1] + " bytes; an output of " + partitions
          + " partitions has " + indexLength + " ((partitions + 1) * 8)";
    }
    if (indexLength > MAX_INDEX) {
      return "the index of " + partitions + " partitions is larger than the "
          + (MAX_INDEX >> 20) + " MiB the service reads";
    }
    if (fds.length == 3 && sizes[2] != 8L * partitions) {
      return "the checksum file has " + sizes[2] + " bytes; " + partitions + " partitions "
          + "have " + 8L * partitions + " (one long each)";
    }
    ByteBuffer index = ByteBuffer.allocate((int) indexLength);
    try (FileChannel ch = FileChannel.open(Fds.procPath(fds[1]), StandardOpenOption.READ)) {
      while (index.hasRemaining() && ch.read(index, index.position()) > 0) {
        // read on until full
      }
    } catch (IOException e) {
      return "the service cannot open the passed index file again (" + e.getMessage()
          + "): the node service's user needs read permission on the shuffle files";
    }
    if (index.hasRemaining()) {
      return "the index file ended after " + index.position() + " of " + indexLength
          + " bytes (truncated while handed over)";
    }
    index.flip();
    long previous = index.getLong();
    if (previous != 0) {
      return "the index does not start at offset 0 (it starts at " + previous + ")";
    }
    for (int p = 0; p < partitions; p++) {
      long end = index.getLong();
      if (end < previous) {
        return "the index is inconsistent: partition " + p + " ends at " + end
            + ", before it starts (" + previous + ")";
      }
      previous = end;
    }
    if (previous != sizes[0]) {
      return "the index is inconsistent with the data file: its last partition ends at "
          + previous + " but the data file has " + sizes[0] + " bytes";
    }
    return null;
  }

  static String typeName(long type) {
    switch ((int) type) {
      case 0010000:
        return "a pipe (FIFO)";
      case 0140000:
        return "a socket";
      case 0020000:
        return "a character device";
      case 0060000:
        return "a block device";
      case 0040000:
        return "a directory";
      default:
        return "of file type 0" + Long.toOctalString(type);
    }
  }
}
