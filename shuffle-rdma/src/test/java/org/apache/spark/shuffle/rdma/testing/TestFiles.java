/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.testing;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Random;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;

/** Real files for tests: content, Spark-style index files, read-only mappings, a transport. */
public final class TestFiles {
  private TestFiles() {}

  public static byte[] randomBytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes {@code content} to a new file in {@code dir} and maps it read-only. */
  public static MappedByteBuffer mapFile(File dir, byte[] content) throws IOException {
    File f = File.createTempFile("region", ".data", dir);
    Files.write(f.toPath(), content);
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, content.length);
    }
  }

  /** A Spark shuffle index file: the offsets as big-endian longs. */
  public static File writeIndex(File f, long... offsets) throws IOException {
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(f))) {
      for (long o : offsets) {
        out.writeLong(o);
      }
    }
    return f;
  }

  /** A tcp transport on loopback with default settings, no authentication. */
  public static TcpTransport loopbackTcp() throws IOException {
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(new SparkConf(false)),
        "127.0.0.1", null, "app", 1));
  }
}
