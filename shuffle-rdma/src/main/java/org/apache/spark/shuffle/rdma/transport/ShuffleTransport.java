/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;

/**
 * The one-sided read transport behind the shuffle manager (the "transport SPI").
 *
 * <p>A transport has a serving half and a reading half. The serving half exposes memory
 * ({@link #register}) for remote READ only; it does no per-read work on the verbs transport
 * and only key/bounds checks plus a write on the tcp transport. The reading half connects
 * to peers ({@link #connect}) and posts batches of reads against (address, key, length)
 * triples that the serving side published.
 *
 * <p>Implementations: {@code tcp} (emulates one-sided reads over Spark's network-common)
 * and {@code verbs} (RDMA READ through DiSNI). The Spark layer sees only this interface,
 * so a transport plugs in without changes there.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
public interface ShuffleTransport extends Closeable {

  /** Short name as used in {@code spark.shuffle.rdma.transport}: "tcp" or "verbs". */
  String name();

  /** Where peers reach this transport's serving half. */
  PeerAddress localAddress();

  /**
   * Registers {@code memory} (a direct or mapped buffer, position 0 to limit) for remote READ
   * only, and returns the region descriptor to publish. The caller keeps {@code memory}
   * mapped until the future returned by {@link #deregister} completes.
   *
   * @throws IOException if the memory cannot be registered (memlock limit, device error);
   *     the message names the limit and the fix.
   */
  RegisteredRegion register(ByteBuffer memory) throws IOException;

  /**
   * Like {@link #register(ByteBuffer)} for a mapping of a file: a transport that does work
   * per read (tcp) asks {@code backing} before serving and refuses reads of a file changed
   * under its registration; one that does none (verbs) may ignore it.
   */
  default RegisteredRegion register(ByteBuffer memory, BackingCheck backing) throws IOException {
    return register(memory);
  }

  /**
   * How a file must be mapped for {@link #register}. READ_ONLY (a shared read-only mapping)
   * by default; verbs chooses per kernel (see MapModeChoice): READ_ONLY from Linux 6.2,
   * READ_WRITE (shared, the file opened read-write) before, since those kernels pin with
   * FOLL_WRITE|FOLL_FORCE, which a read-only shared mapping refuses; PRIVATE only as the
   * fallback. Whatever the mode, nothing writes to the mapping and the file is never modified.
   */
  default FileChannel.MapMode registrationMapMode() {
    return FileChannel.MapMode.READ_ONLY;
  }

  /**
   * Like {@link #register(ByteBuffer, BackingCheck)} for a file mapped with {@code mappedAs}
   * (a transport may account for how the kernel pins it).
   */
  default RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs) throws IOException {
    return register(memory, backing);
  }

  /**
   * Like {@link #register(ByteBuffer, BackingCheck, FileChannel.MapMode)} for a mapping of
   * {@code source}: the tcp transport sends large reads of such a region from the file with
   * sendfile (see spark.shuffle.rdma.tcp.sendfileThreshold); the bytes are the same pages
   * the mapping shows. Transports that do not serve reads themselves ignore the source.
   */
  default RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs, MappedFileSource source) throws IOException {
    return register(memory, backing, mappedAs);
  }

  /**
   * Like {@link #register(ByteBuffer, BackingCheck, FileChannel.MapMode, MappedFileSource)},
   * under the capability a previous registration had ({@code address}, {@code key}): the node
   * service restarted from its state keeps serving readers that cached the old descriptor.
   * Only a transport that chooses its own keys can; verbs cannot (the device picks them).
   *
   * @throws IOException when the capability is taken (or the transport cannot honour it)
   */
  default RegisteredRegion registerAt(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs, MappedFileSource source, long address, int key)
      throws IOException {
    throw new IOException(name() + " cannot register under a given key");
  }

  /**
   * Registering a file mapped with {@code failed} failed with {@code why}: the mode to map it
   * with and try once more, or null to give up. From then on {@link #registrationMapMode}
   * returns that mode.
   */
  default FileChannel.MapMode registrationFallback(FileChannel.MapMode failed, IOException why) {
    return null;
  }

  /**
   * Revokes the region's key: from return on, a new read with that key is refused (tcp) or
   * fails with a remote access error (verbs). The returned future completes once the
   * transport no longer touches the memory (serves already being written have ended), so
   * the caller may unmap it then. Idempotent.
   */
  CompletableFuture<Void> deregister(RegisteredRegion region);

  /**
   * Returns the channel to {@code peer}, connecting on first use. One channel per peer is
   * shared by every task of this executor; a broken channel is replaced on the next call.
   */
  TransportChannel connect(PeerAddress peer) throws IOException;

  /** Releases connections, regions and threads; never throws. */
  @Override
  void close();

  /** Counters of this transport (reads posted, served, refused, bytes, regions). */
  TransportStats stats();
}
