package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
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
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;

/**
 * One fetchBlocks call against one executor, in two batched rounds of one-sided reads:
 * (1) for every block, the two index entries that bound it (one read of adjacent longs);
 * (2) for every block, its bytes (one read; one more per region boundary it crosses).
 * Each block ends exactly once, in success or failure, through Spark's listener.
 */
final class BlockFetch implements ReadCallback {
  private static final ManagedBuffer EMPTY = new NioManagedBuffer(ByteBuffer.allocate(0));

  /** A block being fetched; [start, end) are its offsets in the data file once known. */
  static final class Block {
    final String blockId;
    final int startReduce;
    final int endReduce; // exclusive
    final ShuffleTableCache.Location location;
    final AtomicBoolean finished = new AtomicBoolean();
    long start;
    long end;
    ByteBuffer assembly; // only for blocks that span regions
    AtomicInteger piecesLeft;

    Block(String blockId, int startReduce, int endReduce, ShuffleTableCache.Location location) {
      this.blockId = blockId;
      this.startReduce = startReduce;
      this.endReduce = endReduce;
      this.location = location;
    }
  }

  /** Attachment of a data read: which block, and where in it the piece goes. */
  private static final class Piece {
    final Block block;
    final int offsetInBlock;

    Piece(Block block, int offsetInBlock) {
      this.block = block;
      this.offsetInBlock = offsetInBlock;
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
      MapOutputDescriptor d = b.location.descriptor;
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
      long dataLength = b.location.descriptor.dataLength();
      if (start < 0 || end < start || end > dataLength) {
        throw new IOException("corrupt index for " + b.blockId + ": [" + start + ", " + end
            + ") outside data of " + dataLength + " bytes");
      }
      if (end - start > Integer.MAX_VALUE - 512) {
        throw new IOException("block " + b.blockId + " has " + (end - start)
            + " bytes; a single block must stay under 2 GiB");
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

  /** Round two: every block whose bounds are known, as one batch. */
  private void readData() {
    List<ReadRequest> batch = new ArrayList<>(blocks.size());
    for (Block b : blocks) {
      if (b.finished.get()) {
        continue;
      }
      if (b.end == b.start) {
        deliver(b, EMPTY);
        continue;
      }
      MapOutputDescriptor d = b.location.descriptor;
      long regionSize = d.regionSize();
      int first = (int) (b.start / regionSize);
      int last = (int) ((b.end - 1) / regionSize);
      if (first != last) {
        b.assembly = ByteBuffer.allocate((int) (b.end - b.start));
        b.piecesLeft = new AtomicInteger(last - first + 1);
      }
      for (int r = first; r <= last; r++) {
        long from = Math.max(b.start, r * regionSize);
        long to = Math.min(b.end, (r + 1) * regionSize);
        batch.add(new ReadRequest(d.dataAddress(r) + (from - r * regionSize), d.dataKey(r),
            (int) (to - from), this, new Piece(b, (int) (from - b.start))));
      }
    }
    stats.dataReads.addAndGet(batch.size());
    if (!batch.isEmpty()) {
      channel.read(batch);
    }
  }

  private void onPiece(Piece p, ManagedBuffer data) {
    Block b = p.block;
    if (b.finished.get()) {
      return;
    }
    if (b.assembly == null) {
      deliver(b, data);
      return;
    }
    try {
      ByteBuffer src = data.nioByteBuffer();
      ByteBuffer dst = b.assembly.duplicate();
      dst.position(p.offsetInBlock);
      dst.put(src);
    } catch (IOException | RuntimeException e) {
      fail(b, e);
      return;
    }
    if (b.piecesLeft.decrementAndGet() == 0) {
      deliver(b, new NioManagedBuffer(b.assembly));
    }
  }

  private void deliver(Block b, ManagedBuffer data) {
    if (!b.finished.compareAndSet(false, true)) {
      return;
    }
    stats.remoteBlocks.incrementAndGet();
    stats.remoteBytes.addAndGet(data.size());
    if (downloads == null) {
      listener.onBlockFetchSuccess(b.blockId, data);
      return;
    }
    // Spark asked for this request to go to disk (larger than maxRemoteBlockSizeFetchToMem):
    // write it to one of its temp files so the reducer does not keep it in memory.
    DownloadFile file = downloads.createTempFile(transportConf);
    try {
      DownloadFileWritableChannel out = file.openForWriting();
      ByteBuffer src = data.nioByteBuffer();
      while (src.hasRemaining()) {
        out.write(src);
      }
      ManagedBuffer onDisk = out.closeAndRead();
      if (!downloads.registerTempFileToClean(file)) {
        file.delete();
        return;
      }
      stats.blocksToDisk.incrementAndGet();
      listener.onBlockFetchSuccess(b.blockId, onDisk);
    } catch (IOException | RuntimeException e) {
      file.delete();
      stats.failedBlocks.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, e);
    }
  }

  private void fail(Block b, Throwable cause) {
    if (b.finished.compareAndSet(false, true)) {
      stats.failedBlocks.incrementAndGet();
      listener.onBlockFetchFailure(b.blockId, cause);
    }
  }
}
