/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node service in its own JVM, started by bin/shuffle-rdma-service: a map output written
 * in Spark's format is handed over from this JVM through the real socket, its paths are
 * deleted, and the plugin's tcp client reads every partition, the index and the checksums
 * from the service's port, byte for byte. Releasing the shuffle brings the gauges back to 0
 * and the old keys are refused; a killed service fails the client's reads cleanly.
 */
class ServiceProcessTest {
  private static final String APP = "app-20261206080000-0001";

  @TempDir
  Path work;

  @Test
  void servesHandedOverOutputsAfterTheirPathsAreDeleted() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = work.resolve("service.sock");
    Path files = Files.createDirectories(work.resolve("executor-dir"));
    MapOutputFiles out = new MapOutputFiles(files, 3, 11, new int[] {1000, 0, 70_000, 5}, 1);
    try (ServiceProcess service = ServiceProcess.start(work, socket, "--transport", "tcp",
            "--host", "127.0.0.1");
        HandOverClient client = HandOverClient.connect(socket, 30_000);
        TcpTransport reader = TestFiles.loopbackTcp()) {
      long rssBefore = service.rssKib();
      HandOverAnswer a = client.handOver(APP, 3, 11, out.partitions(), out.data, out.index,
          out.checksums, ChecksumAlgorithm.CRC32);
      assertFalse(a.isRefused(), String.valueOf(a.refusal()));
      assertEquals("tcp", a.transport());
      assertEquals(service.address, a.address());
      MapOutputDescriptor d = a.descriptor();
      assertEquals(out.partitions(), d.numPartitions());
      assertEquals(out.bytes.length, d.dataLength());
      assertEquals(ChecksumAlgorithm.CRC32, d.checksumAlgorithm());
      out.deletePaths(); // as Spark does when the executor goes

      TransportChannel ch = reader.connect(a.address());
      assertEquals(ByteBuffer.wrap(Files.readAllBytes(indexCopy(out))),
          ByteBuffer.wrap(ReadResult.read(ch, d.indexAddress(), d.indexKey(),
              8 * (out.partitions() + 1))));
      for (int p = 0; p < out.partitions(); p++) {
        if (out.offsets[p + 1] > out.offsets[p]) {
          assertArrayEquals(out.partition(p), readData(ch, d, out.offsets[p],
              (int) (out.offsets[p + 1] - out.offsets[p])), "partition " + p);
        }
      }
      ByteBuffer sums = ByteBuffer.wrap(ReadResult.read(ch, d.checksumAddress(),
          d.checksumKey(), 8 * out.partitions()));
      java.util.zip.Checksum c = ChecksumAlgorithm.CRC32.create();
      c.update(out.partition(2), 0, out.partition(2).length);
      assertEquals(c.getValue(), sums.getLong(16));

      ServiceStats s = client.stats();
      assertEquals(out.totalFileBytes(), s.registeredBytes());
      assertEquals(3, s.openDescriptors());
      assertEquals(1, s.applications());
      assertEquals(1, s.outputs());
      System.out.println("[node service] RSS " + rssBefore + " KiB at start, "
          + service.rssKib() + " KiB serving one output; " + s);

      HandOverAnswer released = client.releaseShuffle(APP, 3);
      assertEquals(1, released.releasedOutputs());
      assertEquals(out.totalFileBytes(), released.releasedBytes());
      ServiceStats after = client.stats();
      assertEquals(0, after.registeredBytes());
      assertEquals(0, after.openDescriptors());
      assertEquals(0, after.applications());
      assertEquals(0, after.outputs());
      ExecutionException refused = assertThrows(ExecutionException.class,
          () -> readAsync(ch, d.indexAddress(), d.indexKey(), 8));
      assertTrue(refused.getCause().getMessage().contains("key"),
          "a released output's key is refused: " + refused.getCause());

      // A second output, then the service dies: the reader fails cleanly, so does the client.
      MapOutputFiles second = new MapOutputFiles(files, 4, 12, new int[] {4096}, 2);
      HandOverAnswer b = client.handOver(APP, 4, 12, 1, second.data, second.index, null,
          ChecksumAlgorithm.NONE);
      assertFalse(b.isRefused(), String.valueOf(b.refusal()));
      assertArrayEquals(second.partition(0), readData(ch, b.descriptor(), 0, 4096));
      service.kill();
      ExecutionException lost = assertThrows(ExecutionException.class,
          () -> readAsync(ch, b.descriptor().dataAddress(0), b.descriptor().dataKey(0), 4096));
      assertTrue(lost.getCause() instanceof IOException, String.valueOf(lost.getCause()));
      IOException gone = assertThrows(IOException.class, () -> client.stats());
      assertTrue(gone.getMessage().contains("closed the connection")
          || gone.getMessage().contains("Broken pipe"), gone.getMessage());
      IOException refusedConnect = assertThrows(IOException.class,
          () -> reader.connect(a.address()));
      assertTrue(refusedConnect.getMessage().contains("onnection refused")
          || String.valueOf(refusedConnect.getCause()).contains("onnection refused"),
          String.valueOf(refusedConnect));
    }
  }

  @Test
  void keepsOutputsAcrossAKillAndARestartWithTheSameArguments() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = work.resolve("service.sock");
    Path files = Files.createDirectories(work.resolve("executor-dir"));
    MapOutputFiles one = new MapOutputFiles(files, 5, 21, new int[] {3000, 0, 90_000}, 4);
    MapOutputFiles two = new MapOutputFiles(files, 5, 22, new int[] {512, 512}, 5);
    String[] args = {"--transport", "tcp", "--host", "127.0.0.1"};
    ServiceProcess service = ServiceProcess.start(work, socket, args);
    try (TcpTransport reader = TestFiles.loopbackTcp()) {
      MapOutputDescriptor d1;
      MapOutputDescriptor d2;
      try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        HandOverAnswer a = client.handOver(APP, 5, 21, one.partitions(), one.data, one.index,
            one.checksums, ChecksumAlgorithm.CRC32);
        HandOverAnswer b = client.handOver(APP, 5, 22, two.partitions(), two.data, two.index,
            null, ChecksumAlgorithm.NONE);
        assertFalse(a.isRefused() || b.isRefused(), a.refusal() + " " + b.refusal());
        d1 = a.descriptor();
        d2 = b.descriptor();
      }
      one.deletePaths(); // the executor went, and Spark deleted its files
      Files.delete(two.data);
      Files.delete(two.index);
      PeerAddress told = service.address;
      service.kill(); // a crash: no shutdown hook

      long t0 = System.nanoTime();
      service = ServiceProcess.start(work, socket, args); // the same command line
      long restartMs = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(told, service.address, "the port readers were told");
      try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        ServiceStats s = client.stats();
        assertEquals(2, s.outputs(), s.toString());
        assertEquals(one.totalFileBytes() + two.bytes.length + 8L * 3, s.registeredBytes());
        // The descriptors readers cached before the crash: same address, same keys.
        TransportChannel ch = reader.connect(told);
        for (int p = 0; p < one.partitions(); p++) {
          if (one.offsets[p + 1] > one.offsets[p]) {
            assertArrayEquals(one.partition(p), readData(ch, d1, one.offsets[p],
                (int) (one.offsets[p + 1] - one.offsets[p])), "partition " + p);
          }
        }
        ByteBuffer sums = ByteBuffer.wrap(ReadResult.read(ch, d1.checksumAddress(),
            d1.checksumKey(), 8 * one.partitions()));
        java.util.zip.Checksum c = ChecksumAlgorithm.CRC32.create();
        c.update(one.partition(2), 0, one.partition(2).length);
        assertEquals(c.getValue(), sums.getLong(16));
        assertArrayEquals(two.partition(1), readData(ch, d2, 512, 512));
        System.out.println("[node service] restarted after SIGKILL in " + restartMs
            + " ms (JVM start included), 2 outputs served again at " + told);

        // A release after the restart ends the output for good: gone at the next start.
        assertEquals(1, client.releaseOutput(APP, 5, 22).releasedOutputs());
      }
      service.close(); // SIGTERM keeps what is left
      service = ServiceProcess.start(work, socket, args);
      try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        assertEquals(1, client.stats().outputs());
        TransportChannel ch = reader.connect(service.address);
        assertArrayEquals(one.partition(0), readData(ch, d1, 0, 3000));
        assertEquals(1, client.releaseShuffle(APP, 5).releasedOutputs());
      }
      try (java.util.stream.Stream<Path> left = Files.list(
          work.resolve("service.sock.state").resolve(DurableOutputs.LINKS))) {
        assertEquals(0, left.count(), "released outputs leave no link");
      }
    } finally {
      service.kill();
    }
  }

  @Test
  void sigtermKeepsTheStateAndRemovesTheSocket() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = work.resolve("service.sock");
    MapOutputFiles out = new MapOutputFiles(work, 0, 1, new int[] {10, 10}, 3);
    ServiceProcess service = ServiceProcess.start(work, socket, "--transport", "tcp",
        "--host", "127.0.0.1");
    try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertFalse(client.handOver(APP, 0, 1, 2, out.data, out.index, null,
          ChecksumAlgorithm.NONE).isRefused());
      assertTrue(Files.exists(socket));
      ProcessHandle.of(service.pid).ifPresent(ProcessHandle::destroy); // SIGTERM
      service.awaitLine("shuffle-rdma-service stopped; its outputs are kept", 60);
      assertTrue(service.process.waitFor(30, TimeUnit.SECONDS));
      assertEquals(143, service.process.exitValue(), "128 + SIGTERM, after the shutdown hook");
      assertFalse(Files.exists(socket), "the socket file is removed");
      assertThrows(IOException.class, client::stats);
    } finally {
      service.close();
    }
    // A rolling restart: the output is served again; with --state-dir none nothing is.
    service = ServiceProcess.start(work, socket, "--transport", "tcp", "--host", "127.0.0.1");
    try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertEquals(1, client.stats().outputs());
    } finally {
      service.close();
    }
    service = ServiceProcess.start(work, socket, "--transport", "tcp", "--host", "127.0.0.1",
        "--state-dir", "none");
    try (HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertEquals(0, client.stats().outputs());
    } finally {
      service.close();
    }
  }

  /** The index bytes as written (the files' paths are gone by the time they are compared). */
  private static Path indexCopy(MapOutputFiles out) throws IOException {
    Path copy = Files.createTempFile("index", ".copy");
    ByteBuffer b = ByteBuffer.allocate(8 * out.offsets.length);
    for (long o : out.offsets) {
      b.putLong(o);
    }
    Files.write(copy, b.array());
    copy.toFile().deleteOnExit();
    return copy;
  }

  private static byte[] readData(TransportChannel ch, MapOutputDescriptor d, long offset,
      int length) throws Exception {
    int region = (int) (offset / d.regionSize());
    return ReadResult.read(ch, d.dataAddress(region) + offset % d.regionSize(),
        d.dataKey(region), length);
  }

  private static byte[] readAsync(TransportChannel ch, long address, int key, int length)
      throws Exception {
    ReadResult r = new ReadResult();
    ch.read(List.of(new ReadRequest(address, key, length, r, null)));
    return r.future.get(60, TimeUnit.SECONDS);
  }
}
