/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.checksum;

import java.util.Locale;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/**
 * The algorithm of the per-partition checksums Spark's writer stored next to a map output
 * (spark.shuffle.checksum.algorithm), as one byte of the descriptor. The classes are the JDK's,
 * as in Spark's ShuffleChecksumHelper, so a reader computes exactly what the writer stored.
 * NONE: the output has no checksums registered (the writer had spark.shuffle.checksum.enabled
 * off, or verification is off so they were not registered).
 */
public enum ChecksumAlgorithm {
  NONE(0),
  ADLER32(1),
  CRC32(2),
  CRC32C(3);

  private final byte code;

  ChecksumAlgorithm(int code) {
    this.code = (byte) code;
  }

  public byte code() {
    return code;
  }

  /** A fresh checksum of this algorithm; NONE has none. */
  public Checksum create() {
    switch (this) {
      case ADLER32:
        return new Adler32();
      case CRC32:
        return new CRC32();
      case CRC32C:
        return new CRC32C();
      default:
        throw new IllegalStateException("no checksum for " + this);
    }
  }

  /** Spark's name for it (ADLER32, CRC32, CRC32C); null for a name it does not know. */
  public static ChecksumAlgorithm ofSparkName(String name) {
    if (name == null) {
      return null;
    }
    switch (name.trim().toUpperCase(Locale.ROOT)) {
      case "ADLER32":
        return ADLER32;
      case "CRC32":
        return CRC32;
      case "CRC32C":
        return CRC32C;
      default:
        return null;
    }
  }

  public static ChecksumAlgorithm ofCode(byte code) {
    for (ChecksumAlgorithm a : values()) {
      if (a.code == code) {
        return a;
      }
    }
    throw new IllegalArgumentException("unknown checksum algorithm code " + code);
  }
}
