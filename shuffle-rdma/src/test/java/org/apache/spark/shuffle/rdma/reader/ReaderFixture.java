/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.apache.spark.SparkConf;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.apache.spark.shuffle.rdma.testing.FetchOutcomes;
import org.apache.spark.shuffle.rdma.testing.TestFiles;

/**
 * Two real tcp transports on loopback (a mapper serving registered files, a reducer reading
 * them) and real map outputs: index and data files written, mmapped and registered in
 * regions of a chosen size, as MapOutputRegistry does. The reducer's channel is wrapped to
 * record every batch (what one fetch posted at once) and, on demand, to hold index READs.
 */
final class ReaderFixture implements AutoCloseable {
  final int maxRead;
  final long regionSize;
  final File dir;
  final TcpTransport server;
  final TcpTransport client;
  final RecordingChannel channel;
  final TransportConf transportConf = new TransportConf("shuffle", MapConfigProvider.EMPTY);

  /** A registered map output and the bytes it holds. */
  static final class Output {
    final MapOutputDescriptor descriptor;
    final int[] sizes;
    final byte[] data;
    final RegisteredRegion index;
    final List<RegisteredRegion> regions;
    /** The registered data file (mapped shared: writes to it show in what is served). */
    final File dataFile;

    Output(MapOutputDescriptor descriptor, int[] sizes, byte[] data, RegisteredRegion index,
        List<RegisteredRegion> regions, File dataFile) {
      this.dataFile = dataFile;
      this.descriptor = descriptor;
      this.sizes = sizes;
      this.data = data;
      this.index = index;
      this.regions = regions;
    }

    long offset(int partition) {
      return Arrays.stream(sizes, 0, partition).asLongStream().sum();
    }

    byte[] bytes(int start, int end) {
      return Arrays.copyOfRange(data, (int) offset(start), (int) offset(end));
    }
  }

  ReaderFixture(File dir, int maxRead, long regionSize) throws IOException {
    this.dir = dir;
    this.maxRead = maxRead;
    this.regionSize = regionSize;
    this.server = transport(maxRead);
    this.client = transport(maxRead);
    this.channel = new RecordingChannel(client.connect(server.localAddress()));
  }

  private static TcpTransport transport(int maxRead) throws IOException {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-test")
        .set("spark.shuffle.rdma.maxReadSize", String.valueOf(maxRead));
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", null,
        "app-test", 1));
  }

  /** Writes, maps and registers a map output with these partition sizes. */
  Output register(int shuffleId, long mapId, int[] sizes, long seed) throws IOException {
    return register(shuffleId, mapId, sizes, seed, ChecksumAlgorithm.NONE);
  }

  /**
   * As {@link #register(int, long, int[], long)}; unless {@code algorithm} is NONE, also
   * registers the partitions' checksums as Spark's writer stores them (one big-endian long per
   * partition, of the bytes on disk), and the descriptor names that region.
   */
  Output register(int shuffleId, long mapId, int[] sizes, long seed, ChecksumAlgorithm algorithm)
      throws IOException {
    int total = Arrays.stream(sizes).sum();
    byte[] data = new byte[total];
    new Random(seed).nextBytes(data);
    ByteBuffer index = ByteBuffer.allocate(8 * (sizes.length + 1));
    long off = 0;
    index.putLong(off);
    for (int s : sizes) {
      off += s;
      index.putLong(off);
    }
    RegisteredRegion indexRegion = server.register(TestFiles.mapFile(dir, index.array()));
    File dataFile = File.createTempFile("output", ".data", dir);
    java.nio.file.Files.write(dataFile.toPath(), data);
    MappedByteBuffer dataMap;
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(dataFile.toPath(),
        java.nio.file.StandardOpenOption.READ)) {
      dataMap = ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, data.length);
    }
    int regions = (int) ((total + regionSize - 1) / regionSize);
    long[] addresses = new long[regions];
    int[] keys = new int[regions];
    List<RegisteredRegion> registered = new ArrayList<>();
    for (int r = 0; r < regions; r++) {
      ByteBuffer slice = dataMap.duplicate();
      slice.position((int) (r * regionSize)).limit((int) Math.min(total, (r + 1) * regionSize));
      RegisteredRegion region = server.register(slice.slice());
      registered.add(region);
      addresses[r] = region.address();
      keys[r] = region.key();
    }
    long sumsAddress = 0;
    int sumsKey = 0;
    if (algorithm != ChecksumAlgorithm.NONE) {
      ByteBuffer sums = ByteBuffer.allocate(8 * sizes.length);
      int at = 0;
      for (int size : sizes) {
        java.util.zip.Checksum c = algorithm.create();
        c.update(data, at, size);
        sums.putLong(c.getValue());
        at += size;
      }
      RegisteredRegion sumsRegion = server.register(TestFiles.mapFile(dir, sums.array()));
      registered.add(sumsRegion);
      sumsAddress = sumsRegion.address();
      sumsKey = sumsRegion.key();
    }
    MapOutputDescriptor d = new MapOutputDescriptor(shuffleId, mapId, "exec-1", sizes.length,
        indexRegion.address(), indexRegion.key(), total, regionSize, addresses, keys,
        algorithm, sumsAddress, sumsKey);
    return new Output(d, sizes, data, indexRegion, registered, dataFile);
  }

  /** Revokes every registration of the output. */
  void deregister(Output o) throws Exception {
    server.deregister(o.index).get(10, TimeUnit.SECONDS);
    for (RegisteredRegion r : o.regions) {
      server.deregister(r).get(10, TimeUnit.SECONDS);
    }
  }

  static BlockFetch.Block block(Output o, int start, int end) {
    return new BlockFetch.Block(id(o, start, end), start, end, o.descriptor,
        new PeerAddress("127.0.0.1", 1));
  }

  static String id(Output o, int start, int end) {
    return "m" + o.descriptor.mapId() + "-" + start + "-" + end;
  }

  /** Starts a fetch of these blocks (in memory, as under maxRemoteBlockSizeFetchToMem). */
  FetchOutcomes start(IndexCache cache, ReaderStats stats, List<BlockFetch.Block> blocks) {
    return start(cache, stats, blocks, null);
  }

  /** Starts a fetch; with {@code downloads}, blocks over the memory threshold go to files. */
  FetchOutcomes start(IndexCache cache, ReaderStats stats, List<BlockFetch.Block> blocks,
      DownloadFileManager downloads) {
    FetchOutcomes out = new FetchOutcomes(blocks.size());
    new BlockFetch(blocks, channel, out, downloads, transportConf, stats, cache).start();
    return out;
  }

  FetchOutcomes fetch(IndexCache cache, ReaderStats stats, List<BlockFetch.Block> blocks)
      throws Exception {
    return fetch(cache, stats, blocks, null);
  }

  FetchOutcomes fetch(IndexCache cache, ReaderStats stats, List<BlockFetch.Block> blocks,
      DownloadFileManager downloads) throws Exception {
    FetchOutcomes out = start(cache, stats, blocks, downloads);
    out.all.get(30, TimeUnit.SECONDS);
    return out;
  }

  @Override
  public void close() {
    client.close();
    server.close();
  }

  /** The real channel, recording each batch's read lengths; can hold matching batches. */
  static final class RecordingChannel extends ForwardingChannel {
    final List<int[]> batches = new CopyOnWriteArrayList<>();
    /** Per batch, per read: whether its success may run on a completion thread. */
    final List<boolean[]> onCompletionThread = new CopyOnWriteArrayList<>();
    private final List<List<ReadRequest>> held = new ArrayList<>();
    private Predicate<ReadRequest> hold = r -> false;

    RecordingChannel(TransportChannel real) {
      super(real);
    }

    /** Holds every later batch whose first read matches, until {@link #releaseHeld}. */
    synchronized void holdWhere(Predicate<ReadRequest> p) {
      hold = p;
    }

    void releaseHeld() {
      List<List<ReadRequest>> go;
      synchronized (this) {
        hold = r -> false;
        go = new ArrayList<>(held);
        held.clear();
      }
      go.forEach(real::read);
    }

    @Override
    public void read(List<ReadRequest> batch) {
      batches.add(batch.stream().mapToInt(ReadRequest::length).toArray());
      boolean[] inline = new boolean[batch.size()];
      for (int i = 0; i < inline.length; i++) {
        inline[i] = batch.get(i).callback().deliversOnCompletionThread(batch.get(i));
      }
      onCompletionThread.add(inline);
      synchronized (this) {
        if (!batch.isEmpty() && hold.test(batch.get(0))) {
          held.add(new ArrayList<>(batch));
          return;
        }
      }
      real.read(batch);
    }
  }
}
