/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.netty.buffer.ByteBuf;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NettyManagedBuffer;
import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.DownloadFile;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.shuffle.DownloadFileWritableChannel;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.checksum.PartitionVerifier;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/**
 * One fetchBlocks call against one executor. Each block's bounds come from its map output's
 * index, cached per executor ({@link IndexCache}): when every index is cached the fetch is
 * one batch of data READs (one round trip); otherwise the missing indexes are read first, one
 * READ per map output, in one batch, and concurrent fetches of the same output share it.
 * Then, as one batch, every block's bytes in the pieces {@link PiecePlan} gives (one when
 * the block fits the channel's largest read and one region), except that adjacent blocks of
 * one map output that together still fit one read are read by one READ and handed to Spark
 * as views of it (Netty slices on tcp, {@link BlockSlice}s otherwise), never copies.
 *
 * <p>Where the bytes go follows Spark's fetcher: without a {@link DownloadFileManager} (the
 * request is under spark.network.maxRemoteBlockSizeFetchToMem) a one-piece block is handed
 * over as the transport's buffer and a larger one is assembled in memory; with one, every
 * block streams piece by piece, in order, into one of Spark's download files, with at most
 * {@link #DISK_WINDOW} of its pieces in flight, so a block of any size (also over 2 GiB)
 * never sits in memory whole (these blocks are not coalesced: each has its own file). The
 * writes into those files run on the {@link DownloadWriters}' threads, never on the
 * transport's callback threads (see {@link Download}). Each block ends exactly once, in
 * success or failure, through Spark's listener.
 */
final class BlockFetch implements ReadCallback {
  private static final ManagedBuffer EMPTY = new NioManagedBuffer(ByteBuffer.allocate(0));
  /** Pieces of one block in flight while it streams to disk: enough to keep the link busy. */
  static final int DISK_WINDOW = 4;

  /**
   * A block being fetched; [start(), end()) are its offsets in the data file once its index
   * is known. Made per block (by RdmaBlockStoreClient), so it holds only what every block
   * needs (48 bytes): a block read in more than one READ keeps the rest in {@link Pieces}.
   */
  static final class Block {
    private static final AtomicIntegerFieldUpdater<Block> FINISHED =
        AtomicIntegerFieldUpdater.newUpdater(Block.class, "finished");
    final String blockId;
    final int startReduce;
    final int endReduce; // exclusive
    final MapOutputDescriptor descriptor;
    final PeerAddress peer;
    /** 1 once the block ended (success or failure): in a field, not an AtomicBoolean. */
    private volatile int finished;
    /** Once its bounds are known and valid: offsets and, when verifying, checksums. */
    OutputIndex index;
    // Which output (first-appearance order in this fetch), for grouping adjacent blocks.
    int output;
    /** Read in more than one piece, or to disk; null for a block of one READ. */
    Pieces pieces;

    Block(String blockId, int startReduce, int endReduce, MapOutputDescriptor descriptor,
        PeerAddress peer) {
      this.blockId = blockId;
      this.startReduce = startReduce;
      this.endReduce = endReduce;
      this.descriptor = descriptor;
      this.peer = peer;
    }

    Block(String blockId, int startReduce, int endReduce, ShuffleTableCache.Location location) {
      this(blockId, startReduce, endReduce, location.descriptor, location.peer);
    }

    boolean finished() {
      return finished != 0;
    }

    /** Ends the block; true for the one caller that did. */
    boolean finish() {
      return FINISHED.compareAndSet(this, 0, 1);
    }

    /** The block's first byte in the data file (once {@link #index} is set). */
    long start() {
      return index.offsets[startReduce];
    }

    long end() {
      return index.offsets[endReduce];
    }
  }

  /**
   * The state of a block read in more than one READ, in memory: its plan and the buffer the
   * pieces are copied into. A block streaming to disk is a {@link Download}.
   */
  static class Pieces {
    final List<PiecePlan.Piece> plan;
    ByteBuffer assembly; // in memory
    AtomicInteger left; // in memory

    Pieces(List<PiecePlan.Piece> plan) {
      this.plan = plan;
    }
  }

  /**
   * A block streaming into one of Spark's download files (issue 25). The transport's callback
   * threads only queue its pieces here (retained, not copied); the writes run on a writer
   * thread ({@link DownloadWriters}), one task per file at a time, so a slow disk holds up
   * this file and never another fetch's completions on the shared callback threads. The
   * window is as before: the next piece is posted once the writer took the previous one, so
   * at most {@link #DISK_WINDOW} pieces of the block are held (in flight, queued here or kept
   * by the {@link OrderedPieceWriter}). A failure from any thread is queued too: the writer
   * thread aborts, closes and deletes the file after the write in progress, then reports it.
   */
  private final class Download extends Pieces implements Runnable {
    final Block block;
    final DownloadFile file;
    final DownloadFileWritableChannel out;
    final OrderedPieceWriter writer;
    final PartitionVerifier verifier; // verifying: fed by the writer in block order
    // Guarded by this.
    private int nextToPost;
    private final ArrayDeque<PiecePlan.Piece> queuedPieces = new ArrayDeque<>(DISK_WINDOW);
    private final ArrayDeque<ManagedBuffer> queuedData = new ArrayDeque<>(DISK_WINDOW);
    private boolean scheduled; // a writer thread runs this, or will
    private Throwable failure;
    private boolean abandoned; // the failure was handled

    Download(Block block, List<PiecePlan.Piece> plan, DownloadFile file,
        DownloadFileWritableChannel out, PartitionVerifier verifier) {
      super(plan);
      this.block = block;
      this.file = file;
      this.out = out;
      this.verifier = verifier;
      this.writer = verifier == null ? new OrderedPieceWriter(out, plan.size())
          : new OrderedPieceWriter(out, plan.size(), verifier::update);
    }

    /** The first pieces, up to the window, into the fetch's batch. */
    synchronized void start(List<ReadRequest> batch) {
      int first = Math.min(DISK_WINDOW, plan.size());
      for (int i = 0; i < first; i++) {
        batch.add(request(block, plan.get(i)));
      }
      nextToPost = first;
    }

    /** A piece arrived (a callback thread): queued for the writer, which runs if idle. */
    void offer(PiecePlan.Piece piece, ManagedBuffer data) {
      synchronized (this) {
        if (failure != null || block.finished()) {
          return;
        }
        data.retain();
        queuedPieces.add(piece);
        queuedData.add(data);
        if (scheduled) {
          return;
        }
        scheduled = true;
      }
      schedule();
    }

    /** The block failed (it is finished): the writer cleans up and reports it. */
    void fail(Throwable cause) {
      synchronized (this) {
        failure = cause;
        ManagedBuffer d;
        while ((d = queuedData.poll()) != null) {
          d.release();
        }
        queuedPieces.clear();
        if (scheduled) {
          return;
        }
        scheduled = true;
      }
      schedule();
    }

    private void schedule() {
      try {
        writers.execute(this);
      } catch (RejectedExecutionException e) {
        run(); // the writers are shut down (the client closed): on this thread, as before
      }
    }

    /** On a writer thread: the queued pieces in order, or the failure; one task per file. */
    @Override
    public void run() {
      while (true) {
        PiecePlan.Piece piece;
        ManagedBuffer data;
        Throwable cause;
        synchronized (this) {
          cause = abandoned ? null : failure;
          piece = failure != null ? null : queuedPieces.poll();
          data = piece == null ? null : queuedData.poll();
          if (cause == null && piece == null) {
            scheduled = false;
            return;
          }
          abandoned |= cause != null;
        }
        try {
          if (cause != null) {
            abandon(cause);
          } else {
            write(piece, data);
          }
        } catch (RuntimeException e) {
          // Spark's listener threw, after the block ended: the loop must go on (or this
          // file would keep its scheduled mark with nobody running it).
          BlockFetch.this.fail(block, e);
        }
      }
    }

    /** Writes what is in order, keeps the window full, finishes the block after its last. */
    private void write(PiecePlan.Piece piece, ManagedBuffer data) {
      boolean complete;
      ReadRequest next = null;
      try {
        complete = writer.accept(piece.index, data);
        synchronized (this) {
          if (failure == null && !block.finished() && nextToPost < plan.size()) {
            next = request(block, plan.get(nextToPost++));
          }
        }
      } catch (IOException | RuntimeException e) {
        BlockFetch.this.fail(block, e);
        return;
      } finally {
        data.release();
      }
      if (next != null) {
        try {
          post(Collections.singletonList(next));
        } catch (RuntimeException e) {
          BlockFetch.this.fail(block, e);
          return;
        }
      }
      if (complete) {
        finishDownload(this);
      }
    }

    private void abandon(Throwable cause) {
      writer.abort();
      try {
        out.close();
      } catch (IOException | RuntimeException ignored) {
        // the file is deleted next
      }
      file.delete();
      stats.blockReadFailures.incrementAndGet();
      listener.onBlockFetchFailure(block.blockId, cause);
    }
  }

  /**
   * Attachment of a data read of a block of several pieces: which block, and which piece of
   * it. A block read by one READ is that READ's attachment itself.
   */
  private static final class Piece {
    final Block block;
    final PiecePlan.Piece piece;

    Piece(Block block, PiecePlan.Piece piece) {
      this.block = block;
      this.piece = piece;
    }
  }

  /** Attachment of one READ covering adjacent blocks of one output, from {@code start}. */
  private static final class Run {
    final List<Block> blocks;
    final long start;

    Run(List<Block> blocks, long start) {
      this.blocks = blocks;
      this.start = start;
    }
  }

  private static final Comparator<Block> BY_OUTPUT_THEN_START =
      Comparator.<Block>comparingInt(b -> b.output).thenComparingLong(Block::start);

  private final List<Block> blocks;
  private final TransportChannel channel;
  private final BlockFetchingListener listener;
  private final DownloadFileManager downloads;
  private final TransportConf transportConf;
  private final ReaderStats stats;
  private final IndexCache indexes;
  private final Executor writers;
  private final RequestPool requests;
  /** Blocks whose bounds are not yet known, plus one until start() has seen them all. */
  private final AtomicInteger boundsLeft = new AtomicInteger(1);
  private boolean cached;

  /**
   * A fetch whose download files are written by the {@link DownloadWriters#shared} threads
   * and whose requests come from {@link RequestPool#shared}.
   */
  BlockFetch(List<Block> blocks, TransportChannel channel, BlockFetchingListener listener,
      DownloadFileManager downloads, TransportConf transportConf, ReaderStats stats,
      IndexCache indexes) {
    this(blocks, channel, listener, downloads, transportConf, stats, indexes,
        DownloadWriters.shared(), RequestPool.shared());
  }

  /**
   * @param writers runs the writes into download files (never a transport thread)
   * @param requests the spare requests of one-READ blocks, shared by the executor's fetches
   */
  BlockFetch(List<Block> blocks, TransportChannel channel, BlockFetchingListener listener,
      DownloadFileManager downloads, TransportConf transportConf, ReaderStats stats,
      IndexCache indexes, Executor writers, RequestPool requests) {
    this.writers = writers;
    this.requests = requests;
    this.blocks = blocks;
    this.channel = channel;
    this.listener = listener;
    this.downloads = downloads;
    this.transportConf = transportConf;
    this.stats = stats;
    this.indexes = indexes;
  }

  void start() {
    stats.fetches.incrementAndGet();
    List<ReadRequest> indexBatch = new ArrayList<>();
    // Blocks whose index is still loading (or failed), and its load; null while all cached.
    List<Block> loading = null;
    List<CompletableFuture<OutputIndex>> offsets = null;
    int maxRead = channel.maxReadLength();
    boolean allCached = true;
    MapOutputDescriptor last = null;
    int outputs = -1;
    for (Block b : blocks) {
      MapOutputDescriptor d = b.descriptor;
      if (b.startReduce < 0 || b.endReduce > d.numPartitions() || b.startReduce >= b.endReduce) {
        fail(b, new IOException("block " + b.blockId + " asks for partitions ["
            + b.startReduce + ", " + b.endReduce + ") of a map output with "
            + d.numPartitions()));
        continue;
      }
      // Spark lists an output's blocks together; a repeat elsewhere only splits a group.
      if (d != last) {
        outputs++;
        last = d;
      }
      b.output = outputs;
      CompletableFuture<OutputIndex> f = indexes.offsets(d, maxRead, indexBatch);
      if (f.isDone() && !f.isCompletedExceptionally()) {
        // Cached (the steady state): bounds now, no stage and no lambda per block.
        bound(b, f.getNow(null));
        continue;
      }
      allCached = false;
      if (loading == null) {
        loading = new ArrayList<>();
        offsets = new ArrayList<>();
      }
      loading.add(b);
      offsets.add(f);
    }
    cached = allCached;
    if (cached) {
      stats.cachedFetches.incrementAndGet();
    }
    if (!indexBatch.isEmpty()) {
      channel.read(indexBatch);
    }
    for (int i = 0; loading != null && i < loading.size(); i++) {
      CompletableFuture<OutputIndex> f = offsets.get(i);
      Block b = loading.get(i);
      boundsLeft.incrementAndGet();
      f.whenComplete((o, e) -> {
        if (e != null) {
          fail(b, e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
        } else {
          bound(b, o);
        }
        boundDone();
      });
    }
    boundDone();
  }

  private void bound(Block b, OutputIndex index) {
    long start = index.offsets[b.startReduce];
    long end = index.offsets[b.endReduce];
    long dataLength = b.descriptor.dataLength();
    if (start < 0 || end < start || end > dataLength) {
      fail(b, new IOException("corrupt index for " + b.blockId + ": [" + start + ", " + end
          + ") outside data of " + dataLength + " bytes"));
      return;
    }
    b.index = index;
  }

  private void boundDone() {
    if (boundsLeft.decrementAndGet() == 0) {
      readData();
    }
  }

  /**
   * Final in-memory deliveries (a one-READ block, or a run of adjacent ones, not fetched to
   * disk and not verified against checksums) only hand the bytes to Spark's listener, which
   * queues them for the task: on verbs they run on the completion thread, with no hand-off
   * per batch. Pieces (assembled or written to disk) and checksum verification (work per
   * byte) stay on the callback threads, as do index loads (they post the data READs).
   */
  @Override
  public boolean deliversOnCompletionThread(ReadRequest request) {
    Object a = request.attachment();
    return (a instanceof Block || a instanceof Run) && downloads == null
        && !indexes.verifiesChecksums();
  }

  @Override
  public void onSuccess(ReadRequest request, ManagedBuffer data) {
    Object a = request.attachment();
    if (a instanceof Block) {
      // A one-READ block: the request is the pool's again after this, and so never throws
      // (a channel would call onFailure with a request that may be another block's by then).
      Block b = (Block) a;
      try {
        if (!b.finished()) {
          deliver(b, data);
        }
      } catch (RuntimeException e) {
        fail(b, e); // as the channel's onFailure would: nothing once the block ended
      } finally {
        requests.give(request);
      }
    } else if (a instanceof Run) {
      onRun((Run) a, data);
    } else {
      onPiece((Piece) a, data);
    }
  }

  @Override
  public void onFailure(ReadRequest request, Throwable cause) {
    Object a = request.attachment();
    if (a instanceof Block) {
      try {
        fail((Block) a, cause);
      } finally {
        requests.give(request);
      }
    } else if (a instanceof Run) {
      for (Block b : ((Run) a).blocks) {
        fail(b, cause);
      }
    } else {
      fail(((Piece) a).block, cause);
    }
  }

  /** The data round: one batch with every block's READs, adjacent small blocks coalesced. */
  private void readData() {
    List<ReadRequest> batch = new ArrayList<>(blocks.size());
    int maxRead = channel.maxReadLength();
    List<Block> inMemory = downloads == null ? new ArrayList<>(blocks.size()) : null;
    for (Block b : blocks) {
      if (b.finished()) {
        continue;
      }
      if (b.end() == b.start()) {
        deliver(b, EMPTY);
        continue;
      }
      if (inMemory != null) {
        inMemory.add(b);
        continue;
      }
      try {
        startDownload(b, PiecePlan.plan(b.start(), b.end(), b.descriptor.regionSize(), maxRead),
            batch);
      } catch (IOException | RuntimeException e) {
        fail(b, e);
      }
    }
    if (inMemory != null) {
      coalesce(inMemory, maxRead, batch);
    }
    int rounds = cached ? 0 : 1;
    if (!batch.isEmpty()) {
      post(batch);
      rounds++;
    }
    stats.roundTrips.addAndGet(rounds);
    if (cached) {
      stats.cachedFetchRoundTrips.addAndGet(rounds);
    }
  }

  /**
   * Groups blocks of one output whose bytes follow each other into runs that one READ can
   * cover (one region, at most {@code maxRead}); a run of one is read as before.
   */
  private void coalesce(List<Block> live, int maxRead, List<ReadRequest> batch) {
    if (!sorted(live)) {
      live.sort(BY_OUTPUT_THEN_START);
    }
    int i = 0;
    while (i < live.size()) {
      Block first = live.get(i);
      long regionSize = first.descriptor.regionSize();
      int j = i + 1;
      long start = first.start();
      long end = first.end();
      while (j < live.size()) {
        Block next = live.get(j);
        if (next.output != first.output || next.start() != end
            || !oneRead(start, next.end(), regionSize, maxRead)) {
          break;
        }
        end = next.end();
        j++;
      }
      if (j - i == 1) {
        startInMemory(first, maxRead, batch);
      } else {
        List<Block> run = new ArrayList<>(live.subList(i, j));
        stats.coalescedBlocks.addAndGet(run.size());
        MapOutputDescriptor d = first.descriptor;
        int region = (int) (start / regionSize);
        batch.add(new ReadRequest(d.dataAddress(region) + start - region * regionSize,
            d.dataKey(region), (int) (end - start), this, new Run(run, start)));
      }
      i = j;
    }
  }

  /** Whether the blocks are in coalescing order already (Spark lists them so): no sort. */
  private static boolean sorted(List<Block> live) {
    for (int i = 1; i < live.size(); i++) {
      if (BY_OUTPUT_THEN_START.compare(live.get(i - 1), live.get(i)) > 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether [start, end) is one READ: inside one region and no longer than maxRead. */
  static boolean oneRead(long start, long end, long regionSize, int maxRead) {
    return end - start <= maxRead && start / regionSize == (end - 1) / regionSize;
  }

  private void onRun(Run run, ManagedBuffer data) {
    if (data instanceof NettyManagedBuffer) {
      onNettyRun(run, data);
      return;
    }
    ByteBuffer whole;
    try {
      whole = data.nioByteBuffer();
    } catch (IOException | RuntimeException e) {
      for (Block b : run.blocks) {
        fail(b, e);
      }
      return;
    }
    for (Block b : run.blocks) {
      long start = b.start();
      deliver(b, new BlockSlice(data, whole, (int) (start - run.start), (int) (b.end() - start)));
    }
  }

  /**
   * A run answered in a Netty buffer (tcp): each block is a slice of it. Its NIO form would
   * copy an answer that arrived in several socket reads (a composite buffer), which Spark's
   * own fetcher never does; a slice is read through Spark's stream with no copy. The slices
   * hold no reference of their own: like {@link BlockSlice}, Spark's retain of a block is a
   * reference to the whole answer.
   */
  private void onNettyRun(Run run, ManagedBuffer data) {
    ByteBuf whole;
    try {
      whole = (ByteBuf) data.convertToNetty();
    } catch (IOException | RuntimeException e) {
      for (Block b : run.blocks) {
        fail(b, e);
      }
      return;
    }
    try {
      int base = whole.readerIndex();
      for (Block b : run.blocks) {
        long start = b.start();
        deliver(b, new NettyManagedBuffer(
            whole.slice(base + (int) (start - run.start), (int) (b.end() - start))));
      }
    } finally {
      whole.release();
    }
  }

  private void startInMemory(Block b, int maxRead, List<ReadRequest> batch) {
    try {
      long start = b.start();
      long end = b.end();
      MapOutputDescriptor d = b.descriptor;
      long regionSize = d.regionSize();
      if (regionSize > 0 && oneRead(start, end, regionSize, maxRead)) {
        // The common case: one READ, the block its attachment; no plan, no piece objects.
        int region = (int) (start / regionSize);
        batch.add(requests.take().reset(d.dataAddress(region) + start - region * regionSize,
            d.dataKey(region), (int) (end - start), this, b));
        return;
      }
      List<PiecePlan.Piece> plan = PiecePlan.plan(start, end, regionSize, maxRead);
      String problem = PiecePlan.inMemoryProblem(end - start);
      if (problem != null) {
        throw new IOException("block " + b.blockId + ": " + problem);
      }
      Pieces p = new Pieces(plan);
      p.assembly = ByteBuffer.allocate((int) (end - start));
      p.left = new AtomicInteger(plan.size());
      b.pieces = p;
      for (PiecePlan.Piece piece : plan) {
        batch.add(request(b, piece));
      }
    } catch (IOException | RuntimeException e) {
      fail(b, e);
    }
  }

  private void startDownload(Block b, List<PiecePlan.Piece> plan, List<ReadRequest> batch)
      throws IOException {
    DownloadFile file = downloads.createTempFile(transportConf);
    DownloadFileWritableChannel out;
    try {
      out = file.openForWriting();
    } catch (IOException | RuntimeException e) {
      file.delete();
      throw e;
    }
    Download d;
    try {
      d = new Download(b, plan, file, out, verifier(b));
    } catch (RuntimeException e) {
      try {
        out.close();
      } catch (IOException | RuntimeException ignored) {
        // the file is deleted next
      }
      file.delete();
      throw e;
    }
    b.pieces = d; // before its READs are posted: their callbacks find it
    d.start(batch);
  }

  private ReadRequest request(Block b, PiecePlan.Piece p) {
    MapOutputDescriptor d = b.descriptor;
    return new ReadRequest(d.dataAddress(p.region) + p.offsetInRegion, d.dataKey(p.region),
        p.length, this, new Piece(b, p));
  }

  private void post(List<ReadRequest> batch) {
    if (!batch.isEmpty()) {
      stats.dataReads.addAndGet(batch.size());
      channel.read(batch);
    }
  }

  private void onPiece(Piece p, ManagedBuffer data) {
    Block b = p.block;
    if (b.finished()) {
      return;
    }
    Pieces pieces = b.pieces;
    if (pieces instanceof Download) {
      ((Download) pieces).offer(p.piece, data); // written on a writer thread, not this one
      return;
    }
    try {
      ByteBuffer dst = pieces.assembly.duplicate();
      dst.position((int) p.piece.offsetInBlock);
      copyInto(data, dst);
    } catch (IOException | RuntimeException e) {
      fail(b, e);
      return;
    }
    if (pieces.left.decrementAndGet() == 0) {
      deliver(b, new NioManagedBuffer(pieces.assembly));
    }
  }

  /** Copies the buffer's bytes into {@code dst} once (a composite Netty buffer too). */
  private static void copyInto(ManagedBuffer data, ByteBuffer dst) throws IOException {
    if (data instanceof NettyManagedBuffer) {
      ByteBuf buf = (ByteBuf) data.convertToNetty();
      try {
        ByteBuffer to = dst.duplicate();
        to.limit(to.position() + buf.readableBytes());
        buf.getBytes(buf.readerIndex(), to);
      } finally {
        buf.release();
      }
    } else {
      dst.put(data.nioByteBuffer());
    }
  }

  /** On the writer thread, once every piece is written. */
  private void finishDownload(Download p) {
    Block b = p.block;
    if (!b.finish()) {
      return;
    }
    String mismatch = p.verifier == null ? null : verified(b, p.verifier);
    if (mismatch != null) {
      try {
        p.out.close();
      } catch (IOException | RuntimeException ignored) {
        // the file is deleted next
      }
      p.file.delete();
      stats.blockReadFailures.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, new ChecksumMismatchException(b, mismatch));
      return;
    }
    ManagedBuffer onDisk;
    try {
      onDisk = p.out.closeAndRead();
    } catch (IOException | RuntimeException e) {
      p.file.delete();
      stats.blockReadFailures.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, e);
      return;
    }
    if (!downloads.registerTempFileToClean(p.file)) {
      // The fetcher is gone (task ended): nobody will read or delete the file but us.
      p.file.delete();
      return;
    }
    stats.remoteBlocks.incrementAndGet();
    stats.remoteBytes.addAndGet(b.end() - b.start());
    stats.blocksToDisk.incrementAndGet();
    listener.onBlockFetchSuccess(b.blockId, onDisk);
  }

  /** A block under the in-memory threshold, or an empty one, handed to Spark. */
  private void deliver(Block b, ManagedBuffer data) {
    if (downloads != null && data.size() > 0) {
      throw new IllegalStateException("blocks fetched to disk finish in finishDownload");
    }
    if (data.size() > 0 && !b.finished()) {
      String mismatch;
      try {
        mismatch = verifyWhole(b, data);
      } catch (IOException | RuntimeException e) {
        fail(b, e);
        return;
      }
      if (mismatch != null) {
        fail(b, new ChecksumMismatchException(b, mismatch));
        return;
      }
    }
    if (!b.finish()) {
      return;
    }
    stats.remoteBlocks.incrementAndGet();
    stats.remoteBytes.addAndGet(data.size());
    listener.onBlockFetchSuccess(b.blockId, data);
  }

  /**
   * A verifier for the block when this executor verifies checksums and the block's output
   * has them; null otherwise (a block of an output without checksums is counted as skipped).
   */
  private PartitionVerifier verifier(Block b) {
    if (!indexes.verifiesChecksums()) {
      return null;
    }
    if (b.index.checksums == null) {
      stats.checksumSkippedBlocks.incrementAndGet();
      return null;
    }
    return new PartitionVerifier(b.index.offsets, b.index.checksums, b.index.algorithm,
        b.startReduce, b.endReduce);
  }

  /** Checks an in-memory block's bytes; null when they match or are not verified. */
  private String verifyWhole(Block b, ManagedBuffer data) throws IOException {
    PartitionVerifier v = verifier(b);
    if (v == null) {
      return null;
    }
    long t0 = System.nanoTime();
    if (data instanceof NettyManagedBuffer) {
      // A tcp answer may be a composite of socket reads: its NIO views, never a copy.
      ByteBuf buf = (ByteBuf) data.convertToNetty();
      try {
        for (ByteBuffer part : buf.nioBuffers(buf.readerIndex(), buf.readableBytes())) {
          v.update(part);
        }
      } finally {
        buf.release();
      }
    } else {
      v.update(data.nioByteBuffer());
    }
    stats.checksumNanos.addAndGet(System.nanoTime() - t0);
    return verified(b, v);
  }

  /** Ends a verification: counts it and returns what differed, or null. */
  private String verified(Block b, PartitionVerifier v) {
    String mismatch = v.finish();
    if (mismatch != null) {
      stats.checksumMismatches.incrementAndGet();
    } else {
      stats.checksumVerifiedBlocks.incrementAndGet();
      stats.checksumVerifiedBytes.addAndGet(v.bytes());
    }
    return mismatch;
  }

  private void fail(Block b, Throwable cause) {
    if (!b.finish()) {
      return;
    }
    Pieces p = b.pieces;
    if (p instanceof Download) {
      ((Download) p).fail(cause); // file closed and deleted, failure reported, by its writer
      return;
    }
    stats.blockReadFailures.incrementAndGet();
    listener.onBlockFetchFailure(b.blockId, cause);
  }
}
