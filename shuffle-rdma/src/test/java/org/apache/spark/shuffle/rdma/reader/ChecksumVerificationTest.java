/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.shuffle.DownloadFile;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.shuffle.SimpleDownloadFile;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * spark.shuffle.rdma.verifyChecksums on real tcp reads of registered files: every way a block
 * reaches Spark (one READ, assembled from pieces, a slice of a coalesced READ, streamed to a
 * download file, a batch block over several partitions) is checked against the writer's
 * per-partition checksums, a changed byte fails exactly its block with a message naming it,
 * and an output without checksums is read unverified and counted.
 */
class ChecksumVerificationTest {
  private static final int REGION = 1 << 20;
  private static final int MAX_READ = 64 << 10;
  /** Tiny, tiny (adjacent: coalesced), several reads, across a region boundary, empty, more. */
  private static final int[] SIZES = {100, 200, 300 << 10, (1 << 20) + 12345, 0, 70 << 10};
  private static final int[][] RANGES = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {1, 6}};

  @TempDir
  File dir;

  private ReaderFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new ReaderFixture(dir, MAX_READ, REGION);
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private final class Downloads implements DownloadFileManager {
    final AtomicInteger created = new AtomicInteger();

    @Override
    public DownloadFile createTempFile(TransportConf conf) {
      return new SimpleDownloadFile(new File(dir, "download-" + created.incrementAndGet()), conf);
    }

    @Override
    public boolean registerTempFileToClean(DownloadFile file) {
      return true;
    }
  }

  private FetchOutcomes fetch(ReaderFixture.Output o, ReaderStats stats, boolean verify,
      DownloadFileManager downloads) throws Exception {
    List<BlockFetch.Block> blocks = new ArrayList<>();
    for (int[] r : RANGES) {
      blocks.add(ReaderFixture.block(o, r[0], r[1]));
    }
    return f.fetch(new IndexCache(1 << 20, stats, verify), stats, blocks, downloads);
  }

  private static void assertAllRead(ReaderFixture.Output o, FetchOutcomes out) {
    assertTrue(out.failures.isEmpty(), out.failures.toString());
    for (int[] r : RANGES) {
      assertArrayEquals(o.bytes(r[0], r[1]), out.bytes.get(ReaderFixture.id(o, r[0], r[1])));
    }
  }

  @ParameterizedTest
  @EnumSource(value = ChecksumAlgorithm.class, names = {"ADLER32", "CRC32", "CRC32C"})
  void everyDeliveryPathIsVerified(ChecksumAlgorithm algorithm) throws Exception {
    ReaderFixture.Output o = f.register(0, 1, SIZES, 3, algorithm);
    ReaderStats stats = new ReaderStats();
    FetchOutcomes out = fetch(o, stats, true, null);
    assertAllRead(o, out);
    assertTrue(stats.coalescedBlocks.get() >= 2, "no coalesced blocks: " + stats.coalescedBlocks);
    assertEquals(RANGES.length - 1, stats.checksumVerifiedBlocks.get()); // not the empty one
    assertEquals(0, stats.checksumMismatches.get());
    // The index and the checksums in one round: index 1 READ, checksums 1 READ.
    assertEquals(2, stats.indexReads.get());

    ReaderStats disk = new ReaderStats();
    assertAllRead(o, fetch(o, disk, true, new Downloads()));
    assertEquals(RANGES.length - 1, disk.checksumVerifiedBlocks.get());
    assertEquals(RANGES.length - 1, disk.blocksToDisk.get());
  }

  @ParameterizedTest
  @EnumSource(value = ChecksumAlgorithm.class, names = {"ADLER32", "CRC32C"})
  void aChangedByteFailsExactlyItsBlocks(ChecksumAlgorithm algorithm) throws Exception {
    ReaderFixture.Output o = f.register(0, 2, SIZES, 4, algorithm);
    // Same length, in place, under the registration: one byte of partition 3 (region 2).
    long at = o.offset(3) + (1 << 20) + 5;
    try (RandomAccessFile raf = new RandomAccessFile(o.dataFile, "rw")) {
      raf.seek(at);
      raf.write(o.data[(int) at] ^ 0x40);
    }
    for (DownloadFileManager downloads : new DownloadFileManager[] {null, new Downloads()}) {
      ReaderStats stats = new ReaderStats();
      FetchOutcomes out = fetch(o, stats, true, downloads);
      assertEquals(2, out.failures.size(), out.failures.toString());
      for (String id : new String[] {ReaderFixture.id(o, 3, 4), ReaderFixture.id(o, 1, 6)}) {
        Throwable t = out.failures.get(id);
        assertInstanceOf(ChecksumMismatchException.class, t, String.valueOf(t));
        assertTrue(t.getMessage().startsWith(ChecksumMismatchException.PREFIX), t.getMessage());
        assertTrue(t.getMessage().contains("block " + id + " of shuffle 0, map 2"),
            t.getMessage());
        assertTrue(t.getMessage().contains("read from executor exec-1: reduce partition 3: "
            + algorithm), t.getMessage());
      }
      assertEquals(2, stats.checksumMismatches.get());
      assertEquals(RANGES.length - 3, stats.checksumVerifiedBlocks.get());
    }
    // Verification off: the changed bytes are handed to Spark.
    ReaderStats off = new ReaderStats();
    FetchOutcomes out = fetch(o, off, false, null);
    assertTrue(out.failures.isEmpty(), out.failures.toString());
    assertEquals(0, off.checksumVerifiedBlocks.get() + off.checksumMismatches.get());
  }

  /**
   * The verbs transport hands over plain NIO buffers (slices of its receive pool), not Netty
   * ones: a channel that answers every read with a direct-buffer copy takes the reader down
   * that path (coalesced blocks become BlockSlices), with the same verification.
   */
  @ParameterizedTest
  @EnumSource(value = ChecksumAlgorithm.class, names = {"ADLER32", "CRC32C"})
  void nioBuffersAsOnVerbsAreVerifiedToo(ChecksumAlgorithm algorithm) throws Exception {
    ReaderFixture.Output o = f.register(0, 4, SIZES, 6, algorithm);
    ForwardingChannel nio = new ForwardingChannel(f.channel) {
      @Override
      public void read(List<ReadRequest> batch) {
        List<ReadRequest> copies = new ArrayList<>(batch.size());
        for (ReadRequest r : batch) {
          copies.add(new ReadRequest(r.remoteAddress(), r.key(), r.length(), new ReadCallback() {
            @Override
            public void onSuccess(ReadRequest ignored, ManagedBuffer data) {
              ByteBuffer copy;
              try {
                ByteBuffer src = data.nioByteBuffer();
                copy = ByteBuffer.allocateDirect(src.remaining());
                copy.put(src).flip();
              } catch (java.io.IOException e) {
                r.callback().onFailure(r, e);
                return;
              }
              r.callback().onSuccess(r, new NioManagedBuffer(copy));
            }

            @Override
            public void onFailure(ReadRequest ignored, Throwable cause) {
              r.callback().onFailure(r, cause);
            }
          }, null));
        }
        real.read(copies);
      }
    };
    ReaderStats stats = new ReaderStats();
    List<BlockFetch.Block> blocks = new ArrayList<>();
    for (int[] r : RANGES) {
      blocks.add(ReaderFixture.block(o, r[0], r[1]));
    }
    FetchOutcomes out = new FetchOutcomes(blocks.size());
    new BlockFetch(blocks, nio, out, null, f.transportConf, stats,
        new IndexCache(1 << 20, stats, true)).start();
    out.all.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertAllRead(o, out);
    assertEquals(BlockSlice.class, out.kinds.get(ReaderFixture.id(o, 0, 1)));
    assertEquals(RANGES.length - 1, stats.checksumVerifiedBlocks.get());
    assertEquals(0, stats.checksumMismatches.get());
  }

  @org.junit.jupiter.api.Test
  void anOutputWithoutChecksumsIsReadUnverifiedAndCounted() throws Exception {
    ReaderFixture.Output o = f.register(0, 3, SIZES, 5, ChecksumAlgorithm.NONE);
    ReaderStats stats = new ReaderStats();
    assertAllRead(o, fetch(o, stats, true, null));
    assertEquals(RANGES.length - 1, stats.checksumSkippedBlocks.get());
    assertEquals(0, stats.checksumVerifiedBlocks.get());
    assertEquals(1, stats.indexReads.get());
  }
}
