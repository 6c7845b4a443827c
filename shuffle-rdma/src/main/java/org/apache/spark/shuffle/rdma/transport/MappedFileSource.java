/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.File;

/**
 * Where a registered mapping comes from: {@code file}, from byte {@code offset} on. A
 * transport that serves reads itself (tcp) may send large reads straight from the file
 * (sendfile) instead of from the mapping; one the NIC serves (verbs) ignores it.
 */
public final class MappedFileSource {
  private final File file;
  private final long offset;

  public MappedFileSource(File file, long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException("negative file offset: " + offset);
    }
    this.file = file;
    this.offset = offset;
  }

  public File file() {
    return file;
  }

  /** The file offset of the mapping's first byte (region address 0 on tcp). */
  public long offset() {
    return offset;
  }

  @Override
  public String toString() {
    return file.getName() + "@" + offset;
  }
}
