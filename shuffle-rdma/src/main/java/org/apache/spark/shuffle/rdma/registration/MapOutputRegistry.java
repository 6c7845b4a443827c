/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.registration;

import java.io.File;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.checksum.PartitionVerifier;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.storage.StorageUtils;

/**
 * The map outputs this executor serves. After a map task committed its data and index files,
 * {@link #register} maps both read-only, registers them with the transport (the data file in
 * regions of at most {@code regionSize}), and returns the descriptor to publish. Only after
 * this returned may the descriptor become visible, so a reader never sees a key that is not
 * yet registered.
 *
 * <p>With a cap on registered bytes (spark.shuffle.rdma.maxRegisteredBytes) an output that
 * would take the total past it is not registered: {@link #register} returns null, nothing is
 * published, and readers fetch its blocks through Spark's own client. The bytes are reserved
 * before mapping, so concurrent map tasks cannot pass the cap together.
 */
public final class MapOutputRegistry {
  private final ShuffleTransport transport;
  private final long regionSize;
  private final String executorId;
  private final ConcurrentHashMap<Integer, ConcurrentHashMap<Long, RegisteredMapOutput>> outputs =
      new ConcurrentHashMap<>();
  private final AtomicLong registeredBytes = new AtomicLong();
  /** Map outputs registered since start (a counter: cleanup does not lower it). */
  private final AtomicLong registrations = new AtomicLong();
  /** Map outputs left unregistered because of the cap (a counter). */
  private final AtomicLong outputsOverCap = new AtomicLong();
  private final long maxRegisteredBytes;

  public MapOutputRegistry(ShuffleTransport transport, long regionSize, String executorId) {
    this(transport, regionSize, executorId, 0L);
  }

  /** @param maxRegisteredBytes cap on registered bytes; 0 for none */
  public MapOutputRegistry(ShuffleTransport transport, long regionSize, String executorId,
      long maxRegisteredBytes) {
    if (maxRegisteredBytes < 0) {
      throw new IllegalArgumentException("maxRegisteredBytes must not be negative: "
          + maxRegisteredBytes);
    }
    this.maxRegisteredBytes = maxRegisteredBytes;
    if (regionSize <= 0 || regionSize > (1L << 30)) {
      throw new IllegalArgumentException("region size must be in (0, 1 GiB]: " + regionSize);
    }
    this.transport = transport;
    this.regionSize = regionSize;
    this.executorId = executorId;
  }

  /** As below without checksums; null when the output is over the cap (not registered). */
  public MapOutputDescriptor register(int shuffleId, long mapId, File dataFile, File indexFile)
      throws IOException {
    return register(shuffleId, mapId, dataFile, indexFile, null, ChecksumAlgorithm.NONE);
  }

  /**
   * As {@link #register(int, long, File, File)}, and registers Spark's checksum file of the
   * output too (one long per partition) when {@code checksumFile} is given and holds exactly
   * one checksum per partition. A missing file (the writer ran with
   * spark.shuffle.checksum.enabled=false) or one of another length is not registered: the
   * descriptor then says NONE and readers skip verification for this output (they count it).
   *
   * @return the descriptor to publish, or null when registering it would pass the cap on
   *     registered bytes (the output stays unregistered; counted in {@link #outputsOverCap})
   */
  public MapOutputDescriptor register(int shuffleId, long mapId, File dataFile, File indexFile,
      File checksumFile, ChecksumAlgorithm algorithm) throws IOException {
    return register(shuffleId, mapId, dataFile, indexFile, checksumFile, algorithm, null);
  }

  /**
   * As {@link #register(int, long, File, File, File, ChecksumAlgorithm)}, each region under
   * the address and key {@code previous} published for it (a node service restarted from its
   * state: readers' cached descriptors stay valid). The files must give the same layout.
   *
   * @throws IOException the layout differs, or the transport cannot reuse the capabilities
   */
  public MapOutputDescriptor restore(MapOutputDescriptor previous, File dataFile,
      File indexFile, File checksumFile) throws IOException {
    return register(previous.shuffleId(), previous.mapId(), dataFile, indexFile, checksumFile,
        previous.checksumAlgorithm(), previous);
  }

  private MapOutputDescriptor register(int shuffleId, long mapId, File dataFile,
      File indexFile, File checksumFile, ChecksumAlgorithm algorithm,
      MapOutputDescriptor previous) throws IOException {
    long indexLength = indexFile.length();
    if (indexLength < 8 || indexLength % 8 != 0 || indexLength > (1L << 30)) {
      throw new IOException("index file " + indexFile + " has " + indexLength
          + " bytes; expected (partitions + 1) * 8");
    }
    long dataLength = dataFile.exists() ? dataFile.length() : 0L;
    int partitions = (int) (indexLength / 8 - 1);
    boolean withChecksums = algorithm != ChecksumAlgorithm.NONE && checksumFile != null
        && partitions > 0 && checksumFile.length() == 8L * partitions;
    if (previous != null && (previous.numPartitions() != partitions
        || previous.dataLength() != dataLength || previous.regionSize() != regionSize
        || (previous.checksumAlgorithm() != ChecksumAlgorithm.NONE) != withChecksums)) {
      throw new IOException("the files of shuffle " + shuffleId + " map " + mapId + " do not "
          + "match the descriptor they were published with (" + partitions + " partitions, "
          + dataLength + " bytes, region size " + regionSize + ")");
    }
    long planned = indexLength + dataLength + (withChecksums ? 8L * partitions : 0L);
    if (!reserve(planned)) {
      outputsOverCap.incrementAndGet();
      return null;
    }
    List<MappedByteBuffer> mappings = new ArrayList<>();
    List<RegisteredRegion> regions = new ArrayList<>();
    try {
      RegisteredRegion index = mapAndRegister(indexFile, 0, indexLength, mappings, regions,
          previous == null ? null : new long[] {previous.indexAddress(), previous.indexKey()});
      int n = (int) ((dataLength + regionSize - 1) / regionSize);
      long[] addresses = new long[n];
      int[] keys = new int[n];
      for (int i = 0; i < n; i++) {
        long offset = i * regionSize;
        RegisteredRegion r = mapAndRegister(dataFile, offset,
            Math.min(regionSize, dataLength - offset), mappings, regions, previous == null
                ? null : new long[] {previous.dataAddress(i), previous.dataKey(i)});
        addresses[i] = r.address();
        keys[i] = r.key();
      }
      ChecksumAlgorithm registeredAlgorithm = ChecksumAlgorithm.NONE;
      long checksumAddress = 0L;
      int checksumKey = 0;
      if (withChecksums) {
        RegisteredRegion sums = mapAndRegister(checksumFile, 0, 8L * partitions, mappings,
            regions, previous == null ? null
                : new long[] {previous.checksumAddress(), previous.checksumKey()});
        registeredAlgorithm = algorithm;
        checksumAddress = sums.address();
        checksumKey = sums.key();
      }
      MapOutputDescriptor d = new MapOutputDescriptor(shuffleId, mapId, executorId,
          partitions, index.address(), index.key(), dataLength, regionSize,
          addresses, keys, registeredAlgorithm, checksumAddress, checksumKey);
      RegisteredMapOutput out = new RegisteredMapOutput(d, mappings, regions,
          backingCheck(dataFile, dataLength));
      RegisteredMapOutput replaced = outputs
          .computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>())
          .put(mapId, out);
      registeredBytes.addAndGet(out.registeredBytes() - planned); // 0 unless a file changed
      registrations.incrementAndGet();
      if (replaced != null) {
        // Spark never commits one task attempt twice; if it did, the newer files win.
        registeredBytes.addAndGet(-replaced.registeredBytes());
        replaced.release(transport);
      }
      return d;
    } catch (IOException | RuntimeException e) {
      registeredBytes.addAndGet(-planned);
      new RegisteredMapOutput(null, mappings, regions, BackingCheck.NONE).release(transport);
      throw e;
    }
  }

  /** Takes {@code bytes} of the cap, or nothing and false when they do not fit. */
  private boolean reserve(long bytes) {
    if (maxRegisteredBytes == 0) {
      registeredBytes.addAndGet(bytes);
      return true;
    }
    long now;
    do {
      now = registeredBytes.get();
      if (now + bytes > maxRegisteredBytes) {
        return false;
      }
    } while (!registeredBytes.compareAndSet(now, now + bytes));
    return true;
  }

  /** Map outputs not registered because they did not fit under the cap (since start). */
  public long outputsOverCap() {
    return outputsOverCap.get();
  }

  /** @param at null, or the address and key to register under ({@link #restore}) */
  private RegisteredRegion mapAndRegister(File file, long offset, long length,
      List<MappedByteBuffer> mappings, List<RegisteredRegion> regions, long[] at)
      throws IOException {
    FileChannel.MapMode mode = transport.registrationMapMode();
    BackingCheck backing = backingCheck(file, offset + length);
    MappedByteBuffer mapping = map(file, mode, offset, length);
    RegisteredRegion region;
    if (at != null) {
      try {
        region = transport.registerAt(mapping, backing, mode,
            new MappedFileSource(file, offset), at[0], (int) at[1]);
      } catch (IOException | RuntimeException e) {
        StorageUtils.dispose(mapping);
        throw e;
      }
      mappings.add(mapping);
      regions.add(region);
      return region;
    }
    try {
      region = transport.register(mapping, backing, mode, new MappedFileSource(file, offset));
    } catch (IOException e) {
      StorageUtils.dispose(mapping);
      // The kernel refused to pin this kind of mapping: the transport may know a mode that
      // works (verbs: shared read-write, then private copies); it keeps using it afterwards.
      // Any other failure has no fallback and fails the registration.
      region = null;
      IOException last = e;
      FileChannel.MapMode tried = mode;
      while (region == null) {
        FileChannel.MapMode fallback = transport.registrationFallback(tried, last);
        if (fallback == null || fallback == tried) {
          if (last != e) {
            last.addSuppressed(e);
          }
          throw last;
        }
        tried = fallback;
        mapping = map(file, fallback, offset, length);
        try {
          region = transport.register(mapping, backing, fallback,
              new MappedFileSource(file, offset));
        } catch (IOException e2) {
          StorageUtils.dispose(mapping);
          last = e2;
        } catch (RuntimeException e2) {
          StorageUtils.dispose(mapping);
          e2.addSuppressed(e);
          throw e2;
        }
      }
    } catch (RuntimeException e) {
      StorageUtils.dispose(mapping);
      throw e;
    }
    mappings.add(mapping);
    regions.add(region);
    return region;
  }

  /**
   * Maps [offset, offset + length) of the file. Writable modes (PRIVATE, and the shared
   * READ_WRITE mapping verbs uses before Linux 6.2) need a channel open for writing (a JDK
   * rule); nothing ever writes through the mapping, so the file is not modified.
   */
  private static MappedByteBuffer map(File file, FileChannel.MapMode mode, long offset,
      long length) throws IOException {
    try (FileChannel ch = mode == FileChannel.MapMode.READ_ONLY
        ? FileChannel.open(file.toPath(), StandardOpenOption.READ)
        : FileChannel.open(file.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return ch.map(mode, offset, length);
    }
  }

  /** The file must still hold [0, end): a truncated or deleted map output is not served. */
  static BackingCheck backingCheck(File file, long end) {
    return () -> {
      long now = file.length(); // 0 when the file is gone
      return now >= end ? null : "map output file " + file.getName() + " is " + now
          + " bytes, shorter than the " + end + " registered (truncated or deleted under its "
          + "registration)";
    };
  }

  /**
   * Null when this executor's registered output (shuffleId, mapId) is still backed by whole
   * files (or is not registered here); else what changed. Spark reads same-executor blocks
   * from the files itself, and a truncated file would read as fewer records without error;
   * the reader asks this first and turns a problem into a fetch failure.
   */
  public String integrityProblem(int shuffleId, long mapId) {
    Map<Long, RegisteredMapOutput> shuffle = outputs.get(shuffleId);
    RegisteredMapOutput out = shuffle == null ? null : shuffle.get(mapId);
    return out == null ? null : out.integrityProblem();
  }

  /**
   * This executor's own blocks, which Spark reads from the files: a verifier fed with the
   * bytes of partitions [startReduce, endReduce) of the registered output as its mappings hold
   * them, for the caller to finish; null when the output is not registered here or has no
   * checksums registered.
   */
  public PartitionVerifier verifyLocal(int shuffleId, long mapId, int startReduce,
      int endReduce) {
    Map<Long, RegisteredMapOutput> shuffle = outputs.get(shuffleId);
    RegisteredMapOutput out = shuffle == null ? null : shuffle.get(mapId);
    return out == null ? null : out.verify(startReduce, endReduce);
  }

  /** Revokes and unmaps every output of the shuffle; completes when all are unmapped. */
  public CompletableFuture<Void> unregisterShuffle(int shuffleId) {
    Map<Long, RegisteredMapOutput> removed = outputs.remove(shuffleId);
    if (removed == null) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (RegisteredMapOutput out : removed.values()) {
      registeredBytes.addAndGet(-out.registeredBytes());
      done.add(out.release(transport));
    }
    return CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]));
  }

  /**
   * Revokes and unmaps one output: a task attempt that committed its output but then failed
   * or was killed, so Spark never tracked it (the driver tells; see
   * UncommittedOutputListener). No-op if not registered here.
   */
  public CompletableFuture<Void> release(int shuffleId, long mapId) {
    Map<Long, RegisteredMapOutput> m = outputs.get(shuffleId);
    RegisteredMapOutput out = m == null ? null : m.remove(mapId);
    if (out == null) {
      return CompletableFuture.completedFuture(null);
    }
    registeredBytes.addAndGet(-out.registeredBytes());
    return out.release(transport);
  }

  /** Revokes and unmaps everything (executor shutdown). */
  public CompletableFuture<Void> close() {
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (Integer shuffleId : new ArrayList<>(outputs.keySet())) {
      done.add(unregisterShuffle(shuffleId));
    }
    return CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]));
  }

  public MapOutputDescriptor descriptor(int shuffleId, long mapId) {
    Map<Long, RegisteredMapOutput> m = outputs.get(shuffleId);
    RegisteredMapOutput out = m == null ? null : m.get(mapId);
    return out == null ? null : out.descriptor();
  }

  /** Map outputs registered since this registry started, cleaned up or not. */
  public long registrations() {
    return registrations.get();
  }

  public int outputCount() {
    int n = 0;
    for (Map<Long, RegisteredMapOutput> m : outputs.values()) {
      n += m.size();
    }
    return n;
  }

  public long registeredBytes() {
    return registeredBytes.get();
  }
}
