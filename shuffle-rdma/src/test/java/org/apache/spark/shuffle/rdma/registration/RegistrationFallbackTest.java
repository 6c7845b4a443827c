/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How MapOutputRegistry maps files with the mode the transport asks for and falls back when
 * registering that mapping fails. The kernel behaviour that makes verbs fall back (EFAULT
 * pinning a shared mapping before 6.2) exists only with an RDMA device, so a real tcp
 * transport is wrapped to refuse one mode the way that kernel does; everything else (files,
 * mappings, registration, reads) is real.
 */
class RegistrationFallbackTest {
  @TempDir
  File dir;

  /** A real tcp transport whose "kernel" refuses to pin mappings of one mode. */
  private static final class Refusing implements ShuffleTransport {
    final TcpTransport tcp;
    final FileChannel.MapMode refused;
    final FileChannel.MapMode fallback;
    volatile FileChannel.MapMode mode;
    final List<FileChannel.MapMode> registeredAs = new ArrayList<>();

    Refusing(TcpTransport tcp, FileChannel.MapMode first, FileChannel.MapMode refused,
        FileChannel.MapMode fallback) {
      this.tcp = tcp;
      this.mode = first;
      this.refused = refused;
      this.fallback = fallback;
    }

    @Override
    public FileChannel.MapMode registrationMapMode() {
      return mode;
    }

    @Override
    public RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
        FileChannel.MapMode mappedAs) throws IOException {
      if (mappedAs == refused) {
        throw new IOException("ibv_reg_mr failed: Bad address (errno 14)");
      }
      synchronized (registeredAs) {
        registeredAs.add(mappedAs);
      }
      return tcp.register(memory, backing);
    }

    @Override
    public FileChannel.MapMode registrationFallback(FileChannel.MapMode failed, IOException why) {
      if (fallback != null) {
        mode = fallback;
      }
      return fallback;
    }

    @Override
    public String name() {
      return "refusing";
    }

    @Override
    public PeerAddress localAddress() {
      return tcp.localAddress();
    }

    @Override
    public RegisteredRegion register(ByteBuffer memory) throws IOException {
      return tcp.register(memory);
    }

    @Override
    public CompletableFuture<Void> deregister(RegisteredRegion region) {
      return tcp.deregister(region);
    }

    @Override
    public TransportChannel connect(PeerAddress peer) throws IOException {
      return tcp.connect(peer);
    }

    @Override
    public void close() {
      tcp.close();
    }

    @Override
    public TransportStats stats() {
      return tcp.stats();
    }
  }

  private static TcpTransport tcp() throws IOException {
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(new SparkConf(false)),
        "127.0.0.1", null, "app", 1));
  }

  private File[] output(byte[] content) throws IOException {
    File data = new File(dir, "shuffle_0_1_0.data");
    Files.write(data.toPath(), content);
    File index = new File(dir, "shuffle_0_1_0.index");
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(index))) {
      out.writeLong(0);
      out.writeLong(content.length);
    }
    return new File[] {data, index};
  }

  @Test
  void aRefusedSharedWritableMappingFallsBackToPrivateAndStaysThere() throws Exception {
    // The first (index) region fails as READ_WRITE and is registered PRIVATE; every later
    // one goes straight to PRIVATE.
    assertFallsBackOnce(FileChannel.MapMode.READ_WRITE, FileChannel.MapMode.PRIVATE, 1);
  }

  @Test
  void aRefusedSharedReadOnlyPinMovesToSharedWritableOnce() throws Exception {
    // verbs auto on a kernel before 6.2: shared read-only is tried first (a backport may take
    // it); the kernel refuses it once and every later region goes straight to READ_WRITE.
    assertFallsBackOnce(FileChannel.MapMode.READ_ONLY, FileChannel.MapMode.READ_WRITE, 3);
  }

  /**
   * A 3 MiB output (index and 3 data regions of 1 MiB) on a transport that refuses
   * {@code refused}, its first mode: every region ends up registered as {@code fallback},
   * which the transport keeps, and the file is unchanged.
   */
  private void assertFallsBackOnce(FileChannel.MapMode refused, FileChannel.MapMode fallback,
      long seed) throws Exception {
    byte[] content = new byte[3 << 20];
    new Random(seed).nextBytes(content);
    File[] f = output(content);
    try (Refusing t = new Refusing(tcp(), refused, refused, fallback)) {
      MapOutputRegistry registry = new MapOutputRegistry(t, 1L << 20, "e");
      MapOutputDescriptor d = registry.register(0, 1, f[0], f[1]);
      assertEquals(3, d.dataRegionCount());
      assertEquals(List.of(fallback, fallback, fallback, fallback), t.registeredAs);
      assertEquals(fallback, t.registrationMapMode());
      registry.close().get();
    }
    assertArrayEquals(content, Files.readAllBytes(f[0].toPath()), "the file was modified");
  }

  @Test
  void aSharedWritableMappingIsRegisteredAsSuchAndNeverWritten() throws Exception {
    byte[] content = new byte[2 << 20];
    new Random(2).nextBytes(content);
    File[] f = output(content);
    long modified = f[0].lastModified();
    try (Refusing t = new Refusing(tcp(), FileChannel.MapMode.READ_WRITE,
        FileChannel.MapMode.READ_ONLY, null)) {
      MapOutputRegistry registry = new MapOutputRegistry(t, 1L << 20, "e");
      registry.register(0, 1, f[0], f[1]);
      assertEquals(3, t.registeredAs.size());
      t.registeredAs.forEach(m -> assertEquals(FileChannel.MapMode.READ_WRITE, m));
      registry.close().get();
    }
    assertArrayEquals(content, Files.readAllBytes(f[0].toPath()));
    assertEquals(modified, f[0].lastModified());
  }

  @Test
  void withoutAFallbackTheFailureIsReported() throws Exception {
    File[] f = output(new byte[4096]);
    try (Refusing t = new Refusing(tcp(), FileChannel.MapMode.READ_ONLY,
        FileChannel.MapMode.READ_ONLY, null)) {
      MapOutputRegistry registry = new MapOutputRegistry(t, 1L << 20, "e");
      IOException e = assertThrows(IOException.class, () -> registry.register(0, 1, f[0], f[1]));
      assertEquals("ibv_reg_mr failed: Bad address (errno 14)", e.getMessage());
      assertEquals(0, registry.outputCount());
    }
  }
}
