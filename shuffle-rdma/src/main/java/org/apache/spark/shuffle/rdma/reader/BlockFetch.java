package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.DownloadFile;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.shuffle.DownloadFileWritableChannel;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/**
 * One fetchBlocks call against one executor, in two batched rounds of one-sided reads:
 * (1) for every block, the two index entries that bound it (one read of adjacent longs);
 * (2) for every block, its bytes, in the pieces {@link PiecePlan} gives (one when the block
 * fits the channel's largest read and one region; more for larger blocks and per region
 * boundary crossed).
 *
 * <p>Where the bytes go follows Spark's fetcher: without a {@link DownloadFileManager} (the
 * request is under spark.network.maxRemoteBlockSizeFetchToMem) a one-piece block is handed
 * over as the transport's buffer and a larger one is assembled in memory; with one, every
 * block streams piece by piece, in order, into one of Spark's download files, with at most
 * {@link #DISK_WINDOW} of its pieces in flight, so a block of any size (also over 2 GiB)
 * never sits in memory whole. Each block ends exactly once, in success or failure, through
 * Spark's listener.
 */
final class BlockFetch implements ReadCallback {
  private static final ManagedBuffer EMPTY = new NioManagedBuffer(ByteBuffer.allocate(0));
  /** Pieces of one block in flight while it streams to disk: enough to keep the link busy. */
  static final int DISK_WINDOW = 4;

  /** A block being fetched; [start, end) are its offsets in the data file once known. */
  static final class Block {
    final String blockId;
    final int startReduce;
    final int endReduce; // exclusive
    final MapOutputDescriptor descriptor;
    final PeerAddress peer;
    final AtomicBoolean finished = new AtomicBoolean();
    long start;
    long end;
    List<PiecePlan.Piece> pieces;
    ByteBuffer assembly; // in memory, more than one piece
    AtomicInteger piecesLeft;
    // To disk: the file, its channel, the in-order writer, the next piece to post (guarded
    // by this block).
    DownloadFile file;
    DownloadFileWritableChannel out;
    OrderedPieceWriter writer;
    int nextToPost;

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
  }

  /** Attachment of a data read: which block, and which piece of it. */
  private static final class Piece {
    final Block block;
    final PiecePlan.Piece piece;

    Piece(Block block, PiecePlan.Piece piece) {
      this.block = block;
      this.piece = piece;
    }
  }

  private final List<Block> blocks;
  private final TransportChannel channel;
  private final BlockFetchingListener listener;
  private final DownloadFileManager downloads;
  private final TransportConf transportConf;
  private final ReaderStats stats;
  private final AtomicInteger indexReadsLeft;

  BlockFetch(List<Block> blocks, TransportChannel channel, BlockFetchingListener listener,
      DownloadFileManager downloads, TransportConf transportConf, ReaderStats stats) {
    this.blocks = blocks;
    this.channel = channel;
    this.listener = listener;
    this.downloads = downloads;
    this.transportConf = transportConf;
    this.stats = stats;
    this.indexReadsLeft = new AtomicInteger(blocks.size());
  }

  void start() {
    List<ReadRequest> batch = new ArrayList<>(blocks.size());
    for (Block b : blocks) {
      MapOutputDescriptor d = b.descriptor;
      if (b.startReduce < 0 || b.endReduce > d.numPartitions() || b.startReduce >= b.endReduce) {
        fail(b, new IOException("block " + b.blockId + " asks for partitions ["
            + b.startReduce + ", " + b.endReduce + ") of a map output with "
            + d.numPartitions()));
        indexReadsLeft.decrementAndGet();
        continue;
      }
      int length = 8 * (b.endReduce - b.startReduce + 1);
      batch.add(new ReadRequest(d.indexEntryAddress(b.startReduce), d.indexKey(), length,
          this, b));
    }
    stats.indexReads.addAndGet(batch.size());
    if (batch.isEmpty()) {
      return;
    }
    channel.read(batch);
  }

  @Override
  public void onSuccess(ReadRequest request, ManagedBuffer data) {
    if (request.attachment() instanceof Block) {
      onIndex((Block) request.attachment(), data);
    } else {
      onPiece((Piece) request.attachment(), data);
    }
  }

  @Override
  public void onFailure(ReadRequest request, Throwable cause) {
    if (request.attachment() instanceof Block) {
      Block b = (Block) request.attachment();
      fail(b, cause);
      indexDone();
    } else {
      fail(((Piece) request.attachment()).block, cause);
    }
  }

  private void onIndex(Block b, ManagedBuffer data) {
    try {
      ByteBuffer entries = data.nioByteBuffer();
      long start = entries.getLong(0);
      long end = entries.getLong(entries.limit() - 8);
      long dataLength = b.descriptor.dataLength();
      if (start < 0 || end < start || end > dataLength) {
        throw new IOException("corrupt index for " + b.blockId + ": [" + start + ", " + end
            + ") outside data of " + dataLength + " bytes");
      }
      b.start = start;
      b.end = end;
    } catch (IOException | RuntimeException e) {
      fail(b, e);
    }
    indexDone();
  }

  private void indexDone() {
    if (indexReadsLeft.decrementAndGet() == 0) {
      readData();
    }
  }

  /** Round two: the pieces of every block whose bounds are known, as one batch. */
  private void readData() {
    List<ReadRequest> batch = new ArrayList<>(blocks.size());
    int maxRead = channel.maxReadLength();
    for (Block b : blocks) {
      if (b.finished.get()) {
        continue;
      }
      if (b.end == b.start) {
        deliver(b, EMPTY);
        continue;
      }
      try {
        b.pieces = PiecePlan.plan(b.start, b.end, b.descriptor.regionSize(), maxRead);
        if (downloads != null) {
          startDownload(b, batch);
        } else {
          startInMemory(b, batch);
        }
      } catch (IOException | RuntimeException e) {
        fail(b, e);
      }
    }
    post(batch);
  }

  private void startInMemory(Block b, List<ReadRequest> batch) throws IOException {
    if (b.pieces.size() > 1) {
      String problem = PiecePlan.inMemoryProblem(b.end - b.start);
      if (problem != null) {
        throw new IOException("block " + b.blockId + ": " + problem);
      }
      b.assembly = ByteBuffer.allocate((int) (b.end - b.start));
      b.piecesLeft = new AtomicInteger(b.pieces.size());
    }
    for (PiecePlan.Piece p : b.pieces) {
      batch.add(request(b, p));
    }
  }

  private void startDownload(Block b, List<ReadRequest> batch) throws IOException {
    DownloadFile file = downloads.createTempFile(transportConf);
    DownloadFileWritableChannel out;
    try {
      out = file.openForWriting();
    } catch (IOException | RuntimeException e) {
      file.delete();
      throw e;
    }
    synchronized (b) {
      b.file = file;
      b.out = out;
      b.writer = new OrderedPieceWriter(out, b.pieces.size());
      int first = Math.min(DISK_WINDOW, b.pieces.size());
      for (int i = 0; i < first; i++) {
        batch.add(request(b, b.pieces.get(i)));
      }
      b.nextToPost = first;
    }
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
    if (b.finished.get()) {
      return;
    }
    if (b.writer != null) {
      onDownloadPiece(b, p.piece, data);
      return;
    }
    if (b.assembly == null) {
      deliver(b, data);
      return;
    }
    try {
      ByteBuffer src = data.nioByteBuffer();
      ByteBuffer dst = b.assembly.duplicate();
      dst.position((int) p.piece.offsetInBlock);
      dst.put(src);
    } catch (IOException | RuntimeException e) {
      fail(b, e);
      return;
    }
    if (b.piecesLeft.decrementAndGet() == 0) {
      deliver(b, new NioManagedBuffer(b.assembly));
    }
  }

  /** A piece of a block going to disk: write what is in order, keep the window full. */
  private void onDownloadPiece(Block b, PiecePlan.Piece piece, ManagedBuffer data) {
    boolean complete;
    ReadRequest next = null;
    try {
      complete = b.writer.accept(piece.index, data);
      synchronized (b) {
        if (!b.finished.get() && b.nextToPost < b.pieces.size()) {
          next = request(b, b.pieces.get(b.nextToPost++));
        }
      }
    } catch (IOException | RuntimeException e) {
      fail(b, e);
      return;
    }
    if (next != null) {
      post(Collections.singletonList(next));
    }
    if (complete) {
      finishDownload(b);
    }
  }

  private void finishDownload(Block b) {
    if (!b.finished.compareAndSet(false, true)) {
      return;
    }
    ManagedBuffer onDisk;
    try {
      onDisk = b.out.closeAndRead();
    } catch (IOException | RuntimeException e) {
      b.file.delete();
      stats.failedBlocks.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, e);
      return;
    }
    if (!downloads.registerTempFileToClean(b.file)) {
      // The fetcher is gone (task ended): nobody will read or delete the file but us.
      b.file.delete();
      return;
    }
    stats.remoteBlocks.incrementAndGet();
    stats.remoteBytes.addAndGet(b.end - b.start);
    stats.blocksToDisk.incrementAndGet();
    listener.onBlockFetchSuccess(b.blockId, onDisk);
  }

  /** A block under the in-memory threshold, or an empty one, handed to Spark. */
  private void deliver(Block b, ManagedBuffer data) {
    if (downloads != null && data.size() > 0) {
      throw new IllegalStateException("blocks fetched to disk finish in finishDownload");
    }
    if (!b.finished.compareAndSet(false, true)) {
      return;
    }
    stats.remoteBlocks.incrementAndGet();
    stats.remoteBytes.addAndGet(data.size());
    listener.onBlockFetchSuccess(b.blockId, data);
  }

  private void fail(Block b, Throwable cause) {
    if (b.finished.compareAndSet(false, true)) {
      OrderedPieceWriter writer;
      synchronized (b) {
        writer = b.writer;
      }
      if (writer != null) {
        writer.abort();
        try {
          b.out.close();
        } catch (IOException | RuntimeException ignored) {
          // the file is deleted next
        }
        b.file.delete();
      }
      stats.failedBlocks.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, cause);
    }
  }
}
