/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.apache.spark.shuffle.rdma.testing.TestFiles.loopbackTcp;
import static org.apache.spark.shuffle.rdma.testing.TestFiles.writeIndex;

import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MapOutputRegistryTest {
  @TempDir
  File dir;

  @Test
  void checksumFileIsRegisteredOnlyWhenItHoldsOneLongPerPartition() throws Exception {
    File data = new File(dir, "shuffle_0_5_0.data");
    java.nio.file.Files.write(data.toPath(), new byte[300]);
    File index = writeIndex(new File(dir, "shuffle_0_5_0.index"), 0, 100, 300);
    File sums = writeIndex(new File(dir, "shuffle_0_5_0.checksum.ADLER32"), 0x11, 0x22);
    File shortSums = writeIndex(new File(dir, "shuffle_0_6_0.checksum.ADLER32"), 0x11);
    try (TcpTransport server = loopbackTcp(); TcpTransport client = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "exec-1");
      MapOutputDescriptor d = registry.register(0, 5, data, index, sums,
          ChecksumAlgorithm.ADLER32);
      assertEquals(ChecksumAlgorithm.ADLER32, d.checksumAlgorithm());
      assertEquals(3, server.stats().regionsRegistered.get()); // index, data, checksums
      ByteBuffer read = ByteBuffer.wrap(ReadResult.read(client.connect(server.localAddress()),
          d.checksumAddress(), d.checksumKey(), 16));
      assertEquals(0x11, read.getLong());
      assertEquals(0x22, read.getLong());
      // No checksum file (the writer had spark.shuffle.checksum.enabled off), or a short one.
      assertEquals(ChecksumAlgorithm.NONE, registry.register(0, 6, data, index,
          new File(dir, "absent"), ChecksumAlgorithm.ADLER32).checksumAlgorithm());
      assertEquals(ChecksumAlgorithm.NONE, registry.register(0, 7, data, index, shortSums,
          ChecksumAlgorithm.ADLER32).checksumAlgorithm());
      registry.unregisterShuffle(0).get(30, TimeUnit.SECONDS);
      assertEquals(0, server.liveRegions());
    }
  }

  @Test
  void localBlocksAreVerifiedFromTheRegisteredMappings() throws Exception {
    byte[] bytes = new byte[3000];
    new java.util.Random(7).nextBytes(bytes);
    File data = new File(dir, "shuffle_1_1_0.data");
    java.nio.file.Files.write(data.toPath(), bytes);
    File index = writeIndex(new File(dir, "shuffle_1_1_0.index"), 0, 1000, 1000, 3000);
    long[] sums = new long[3];
    long[][] ranges = {{0, 1000}, {1000, 1000}, {1000, 3000}};
    for (int p = 0; p < 3; p++) {
      java.util.zip.Checksum c = ChecksumAlgorithm.CRC32.create();
      c.update(bytes, (int) ranges[p][0], (int) (ranges[p][1] - ranges[p][0]));
      sums[p] = c.getValue();
    }
    File sumFile = writeIndex(new File(dir, "shuffle_1_1_0.checksum.CRC32"), sums);
    try (TcpTransport server = loopbackTcp()) {
      // Regions of 1 MiB would hold it all: use the smallest size the registry takes.
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 20, "exec-1");
      registry.register(1, 1, data, index, sumFile, ChecksumAlgorithm.CRC32);
      assertEquals(null, registry.verifyLocal(1, 1, 0, 3).finish());
      assertEquals(3000, registry.verifyLocal(1, 1, 0, 3).bytes());
      assertEquals(null, registry.verifyLocal(1, 9, 0, 3), "not registered here");
      try (RandomAccessFile raf = new RandomAccessFile(data, "rw")) {
        raf.seek(2500);
        raf.write(bytes[2500] ^ 1);
      }
      assertEquals(null, registry.verifyLocal(1, 1, 0, 2).finish());
      String problem = registry.verifyLocal(1, 1, 1, 3).finish();
      assertTrue(problem != null && problem.startsWith("reduce partition 2: CRC32 of its 2000 "
          + "bytes is 0x"), problem);
      registry.unregisterShuffle(1).get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void outputLargerThanTwoGibIsRegisteredInSeveralRegions() throws Exception {
    long size = (5L << 29) + 12345; // 2.5 GiB + change, sparse
    File data = new File(dir, "shuffle_0_1_0.data");
    byte[] marker = "region-boundary".getBytes();
    long[] at = {0, (1L << 30) - 7, 2L << 30, size - marker.length};
    try (RandomAccessFile raf = new RandomAccessFile(data, "rw")) {
      raf.setLength(size);
      for (long p : at) {
        raf.seek(p);
        raf.write(marker);
      }
    }
    File index = writeIndex(new File(dir, "shuffle_0_1_0.index"), 0, 1L << 30, size);
    try (TcpTransport server = loopbackTcp(); TcpTransport client = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "exec-1");
      MapOutputDescriptor d = registry.register(0, 1, data, index);
      assertEquals(3, d.dataRegionCount());
      assertEquals(2, d.numPartitions());
      assertEquals(size, d.dataLength());
      assertEquals(4, server.stats().regionsRegistered.get()); // index + 3 data regions
      assertEquals(size + 24, registry.registeredBytes());
      TransportChannel ch = client.connect(server.localAddress());
      // Index entries, read one-sidedly.
      ByteBuffer idx = ByteBuffer.wrap(ReadResult.read(ch, d.indexEntryAddress(1), d.indexKey(), 16));
      assertEquals(1L << 30, idx.getLong());
      assertEquals(size, idx.getLong());
      // The marker across the first boundary: 7 bytes in region 0, the rest in region 1.
      byte[] head = ReadResult.read(ch, d.dataAddress(0) + (1L << 30) - 7, d.dataKey(0), 7);
      byte[] tail = ReadResult.read(ch, d.dataAddress(1), d.dataKey(1), marker.length - 7);
      byte[] joined = new byte[marker.length];
      System.arraycopy(head, 0, joined, 0, 7);
      System.arraycopy(tail, 0, joined, 7, tail.length);
      assertArrayEquals(marker, joined);
      long last = size - marker.length - (2L << 30);
      assertArrayEquals(marker, ReadResult.read(ch, d.dataAddress(2) + last, d.dataKey(2), marker.length));
      assertArrayEquals(marker, ReadResult.read(ch, d.dataAddress(2), d.dataKey(2), marker.length));

      assertEquals(1, registry.registrations());
      registry.unregisterShuffle(0).get(30, TimeUnit.SECONDS);
      assertEquals(0, registry.outputCount());
      assertEquals(1, registry.registrations(), "a counter: cleanup does not lower it");
      assertEquals(0, registry.registeredBytes());
      assertEquals(0, server.stats().regionsRegistered.get());
      assertEquals(0, server.stats().bytesRegistered.get());
      assertEquals(0, server.liveRegions());
    }
  }

  @Test
  void emptyDataFileRegistersOnlyTheIndex() throws Exception {
    File data = new File(dir, "shuffle_0_2_0.data");
    File index = writeIndex(new File(dir, "shuffle_0_1_0.index"), 0, 0, 0, 0);
    try (TcpTransport server = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      MapOutputDescriptor d = registry.register(0, 2, data, index);
      assertEquals(0, d.dataRegionCount());
      assertEquals(3, d.numPartitions());
      assertEquals(1, server.stats().regionsRegistered.get());
      registry.close().get(10, TimeUnit.SECONDS);
      assertEquals(0, server.stats().regionsRegistered.get());
    }
  }

  @Test
  void malformedIndexIsRejectedAndNothingStaysRegistered() throws Exception {
    File data = new File(dir, "d");
    File index = new File(dir, "i");
    java.nio.file.Files.write(index.toPath(), new byte[13]);
    try (TcpTransport server = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      assertThrows(java.io.IOException.class, () -> registry.register(0, 3, data, index));
      assertEquals(0, server.stats().regionsRegistered.get());
    }
  }

  /** Asserts the read fails and names the problem, and returns its message. */
  private static String refused(TransportChannel ch, long address, int key, int len) {
    java.util.concurrent.ExecutionException e = assertThrows(
        java.util.concurrent.ExecutionException.class, () -> ReadResult.read(ch, address, key, len));
    return e.getCause().getMessage();
  }

  /**
   * The backing-file check MapOutputRegistry really installs (not a stub): reads are served
   * while the files are whole, refused once the data file is truncated under its
   * registration or deleted, and integrityProblem reports the same.
   */
  @Test
  void truncatedOrDeletedOutputsAreRefusedNotServed() throws Exception {
    byte[] content = new byte[3000];
    for (int i = 0; i < content.length; i++) {
      content[i] = (byte) (i * 7 + (i >>> 8));
    }
    File data = new File(dir, "shuffle_0_1_0.data");
    java.nio.file.Files.write(data.toPath(), content);
    File index = writeIndex(new File(dir, "shuffle_0_1_0.index"), 0, 1000, 3000);
    File data2 = new File(dir, "shuffle_0_2_0.data");
    java.nio.file.Files.write(data2.toPath(), content);
    File index2 = new File(dir, "shuffle_0_2_0.index");
    java.nio.file.Files.copy(index.toPath(), index2.toPath());
    try (TcpTransport server = loopbackTcp(); TcpTransport client = loopbackTcp()) {
      MapOutputRegistry registry = new MapOutputRegistry(server, 1L << 30, "e");
      MapOutputDescriptor d = registry.register(0, 1, data, index);
      MapOutputDescriptor d2 = registry.register(0, 2, data2, index2);
      TransportChannel ch = client.connect(server.localAddress());
      assertArrayEquals(java.util.Arrays.copyOfRange(content, 2000, 3000),
          ReadResult.read(ch, d.dataAddress(0) + 2000, d.dataKey(0), 1000));
      assertEquals(null, registry.integrityProblem(0, 1));

      // Truncated to a third: even a read inside the remaining bytes is refused, since the
      // output is no longer what was registered.
      try (RandomAccessFile raf = new RandomAccessFile(data, "rw")) {
        raf.setLength(1000);
      }
      String m = refused(ch, d.dataAddress(0), d.dataKey(0), 10);
      assertTrue(m.contains("is 1000 bytes, shorter than the 3000 registered"), m);
      assertTrue(registry.integrityProblem(0, 1).contains("shorter than the 3000 registered"));

      // Deleted: the mapping keeps the inode, but the output is gone.
      assertTrue(data2.delete());
      m = refused(ch, d2.dataAddress(0) + 100, d2.dataKey(0), 10);
      assertTrue(m.contains("is 0 bytes, shorter than the 3000 registered"), m);
      assertTrue(registry.integrityProblem(0, 2).contains("is 0 bytes"));
      assertEquals(2, server.stats().readsRefused.get());
      assertEquals(1, server.stats().readsServed.get());
      registry.close().get(10, TimeUnit.SECONDS);
    }
  }
}
