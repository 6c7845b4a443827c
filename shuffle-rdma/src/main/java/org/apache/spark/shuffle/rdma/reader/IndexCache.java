/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;

/**
 * The partition offsets of map outputs this executor's reducers have read, shared by all its
 * tasks. The first fetch that needs an output reads its whole index (numPartitions + 1 longs)
 * in one READ; every later block of that output needs only its data READ. When verifying
 * checksums, the output's checksum region (one long per partition) is read in the same batch
 * and cached with the offsets.
 *
 * <p>Entries are keyed by the registration ({@link Key}: executor, shuffle, map id, index
 * address and key, data length), so an output that is recomputed or registered again is a new
 * key and never meets the offsets of the old one. Concurrent fetches of one output share one
 * in-flight load. A failed load is not kept: the blocks waiting on it fail and the next fetch
 * reads the index again. Bounded by {@code capacity} bytes ((partitions + 1) * 8 plus
 * {@link #ENTRY_OVERHEAD} per entry): past it, the least recently used loaded entries go.
 * Entries of a shuffle go with {@link #forget}.
 */
final class IndexCache {
  /** Heap an entry costs beyond its offsets: key, map node, array header. */
  static final int ENTRY_OVERHEAD = 64;

  /**
   * Identity of one registration of one map output's index. Not final: the cache's lookup
   * {@link #probe} is rewritten for each lookup; a key in the map is never changed.
   */
  static final class Key {
    String executorId;
    int shuffleId;
    long mapId;
    long indexAddress;
    int indexKey;
    long dataLength;
    int numPartitions;

    Key() {}

    Key(MapOutputDescriptor d) {
      of(d);
    }

    /** This key, now naming {@code d}'s registration. */
    Key of(MapOutputDescriptor d) {
      this.executorId = d.executorId();
      this.shuffleId = d.shuffleId();
      this.mapId = d.mapId();
      this.indexAddress = d.indexAddress();
      this.indexKey = d.indexKey();
      this.dataLength = d.dataLength();
      this.numPartitions = d.numPartitions();
      return this;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Key)) {
        return false;
      }
      Key k = (Key) o;
      return shuffleId == k.shuffleId && mapId == k.mapId && indexAddress == k.indexAddress
          && indexKey == k.indexKey && dataLength == k.dataLength
          && numPartitions == k.numPartitions && executorId.equals(k.executorId);
    }

    @Override
    public int hashCode() {
      int h = Long.hashCode(mapId);
      h = 31 * h + shuffleId;
      h = 31 * h + Long.hashCode(indexAddress);
      h = 31 * h + indexKey;
      h = 31 * h + executorId.hashCode();
      return h;
    }
  }

  /**
   * One output's offsets (and checksums): loading (weight 0) until its READs complete. The
   * index and, when verifying, the checksum region are read in the same batch; with more than
   * one READ they are assembled into one buffer, the checksums after the index.
   */
  private final class Entry implements ReadCallback {
    final Key key;
    final long dataLength;
    final ChecksumAlgorithm algorithm; // NONE: no checksums to read
    final CompletableFuture<OutputIndex> offsets = new CompletableFuture<>();
    final ByteBuffer assembly; // null when everything is one READ
    final AtomicInteger piecesLeft;
    long weight; // guarded by the cache

    Entry(Key key, long dataLength, ChecksumAlgorithm algorithm, int length, int pieces) {
      this.key = key;
      this.dataLength = dataLength;
      this.algorithm = algorithm;
      this.assembly = pieces > 1 ? ByteBuffer.allocate(length) : null;
      this.piecesLeft = new AtomicInteger(pieces);
    }

    @Override
    public void onSuccess(ReadRequest request, ManagedBuffer data) {
      try {
        ByteBuffer bytes = data.nioByteBuffer();
        if (assembly == null) {
          loaded(this, parse(bytes));
          return;
        }
        ByteBuffer dst = assembly.duplicate();
        dst.position((Integer) request.attachment());
        dst.put(bytes);
        if (piecesLeft.decrementAndGet() == 0) {
          loaded(this, parse(assembly.duplicate()));
        }
      } catch (IOException | RuntimeException e) {
        failed(this, e);
      }
    }

    private OutputIndex parse(ByteBuffer b) throws IOException {
      int indexLength = 8 * (key.numPartitions + 1);
      if (algorithm == ChecksumAlgorithm.NONE) {
        return new OutputIndex(IndexCache.parse(b, key.numPartitions, dataLength), null,
            algorithm);
      }
      ByteBuffer index = b.duplicate();
      index.limit(index.position() + indexLength);
      long[] offsets = IndexCache.parse(index, key.numPartitions, dataLength);
      long[] sums = new long[key.numPartitions];
      int at = b.position() + indexLength;
      if (b.limit() - at != 8 * key.numPartitions) {
        throw new IOException("checksums of " + (b.limit() - at) + " bytes for "
            + key.numPartitions + " partitions");
      }
      for (int i = 0; i < sums.length; i++) {
        sums[i] = b.getLong(at + 8 * i);
      }
      return new OutputIndex(offsets, sums, algorithm);
    }

    @Override
    public void onFailure(ReadRequest request, Throwable cause) {
      failed(this, cause);
    }
  }

  private final long capacity;
  private final ReaderStats stats;
  private final boolean verifyChecksums;
  // Access order: iteration starts at the least recently used entry.
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;
  /** The key of each lookup, guarded by this: a cached index costs no allocation per block. */
  private final Key probe = new Key();

  IndexCache(long capacity, ReaderStats stats) {
    this(capacity, stats, false);
  }

  /** With {@code verifyChecksums}, outputs that have checksums registered load them too. */
  IndexCache(long capacity, ReaderStats stats, boolean verifyChecksums) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity " + capacity);
    }
    this.capacity = capacity;
    this.stats = stats;
    this.verifyChecksums = verifyChecksums;
  }

  /**
   * The offsets of {@code d}'s output: done when cached; else a load, shared with concurrent
   * callers. When this call starts the load it adds the index READs to {@code batch}, which
   * the caller posts.
   */
  CompletableFuture<OutputIndex> offsets(MapOutputDescriptor d, int maxRead,
      List<ReadRequest> batch) {
    Entry e;
    synchronized (this) {
      e = entries.get(probe.of(d));
      if (e != null) {
        return e.offsets;
      }
      Key key = new Key(d);
      ChecksumAlgorithm algorithm = verifyChecksums ? d.checksumAlgorithm()
          : ChecksumAlgorithm.NONE;
      long length = 8L * (d.numPartitions() + 1L);
      long sumsLength = algorithm == ChecksumAlgorithm.NONE ? 0 : 8L * d.numPartitions();
      if (length + sumsLength > Integer.MAX_VALUE - 16) {
        CompletableFuture<OutputIndex> f = new CompletableFuture<>();
        f.completeExceptionally(new IOException("index of " + d + " is " + length
            + " bytes, more than one buffer holds"));
        return f;
      }
      int pieces = pieces(length, maxRead) + pieces(sumsLength, maxRead);
      e = new Entry(key, d.dataLength(), algorithm, (int) (length + sumsLength), pieces);
      entries.put(key, e);
      for (int at = 0; at < length; at += maxRead) {
        int len = (int) Math.min(maxRead, length - at);
        batch.add(new ReadRequest(d.indexAddress() + at, d.indexKey(), len, e, at));
      }
      // The checksums go after the index in the entry's assembly.
      for (int at = 0; at < sumsLength; at += maxRead) {
        int len = (int) Math.min(maxRead, sumsLength - at);
        batch.add(new ReadRequest(d.checksumAddress() + at, d.checksumKey(), len, e,
            (int) length + at));
      }
      stats.indexReads.addAndGet(pieces);
    }
    return e.offsets;
  }

  private static int pieces(long length, int maxRead) {
    return (int) ((length + maxRead - 1) / maxRead);
  }

  boolean verifiesChecksums() {
    return verifyChecksums;
  }

  /** Drops every entry of the shuffle (loads in flight still answer their waiters). */
  synchronized void forget(int shuffleId) {
    Iterator<Entry> it = entries.values().iterator();
    while (it.hasNext()) {
      Entry e = it.next();
      if (e.key.shuffleId == shuffleId) {
        bytes -= e.weight;
        it.remove();
      }
    }
    stats.indexCacheBytes.set(bytes);
  }

  synchronized long bytes() {
    return bytes;
  }

  synchronized int size() {
    return entries.size();
  }

  private void loaded(Entry e, OutputIndex offsets) {
    synchronized (this) {
      // Not kept if forgotten meanwhile (the shuffle went) or larger than the whole cache.
      if (entries.get(e.key) == e) {
        e.weight = offsets.bytes() + ENTRY_OVERHEAD;
        bytes += e.weight;
        evict();
      }
    }
    e.offsets.complete(offsets);
  }

  private void failed(Entry e, Throwable cause) {
    synchronized (this) {
      if (entries.get(e.key) == e) {
        entries.remove(e.key);
      }
    }
    e.offsets.completeExceptionally(cause);
  }

  /** Least recently used loaded entries first, until the bytes fit; loads are never dropped. */
  private void evict() {
    Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator();
    while (bytes > capacity && it.hasNext()) {
      Entry e = it.next().getValue();
      if (e.weight > 0) {
        bytes -= e.weight;
        it.remove();
        stats.indexCacheEvictions.incrementAndGet();
      }
    }
    stats.indexCacheBytes.set(bytes);
  }

  /** Spark's index: big-endian offsets from 0, never decreasing, ending inside the data. */
  static long[] parse(ByteBuffer b, int numPartitions, long dataLength) throws IOException {
    if (b.remaining() != 8 * (numPartitions + 1)) {
      throw new IOException("index of " + b.remaining() + " bytes for " + numPartitions
          + " partitions");
    }
    long[] offsets = new long[numPartitions + 1];
    int at = b.position();
    long previous = 0;
    for (int i = 0; i <= numPartitions; i++) {
      long o = b.getLong(at + 8 * i);
      if (o < previous || o > dataLength) {
        throw new IOException("corrupt index: offset " + i + " is " + o + " (previous "
            + previous + ", data " + dataLength + " bytes)");
      }
      offsets[i] = o;
      previous = o;
    }
    return offsets;
  }
}
