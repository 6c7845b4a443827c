package org.apache.spark.shuffle.rdma.reader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.BlockStoreClient;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;

/**
 * The BlockStoreClient that Spark's ShuffleBlockFetcherIterator uses for remote shuffle
 * blocks when this plugin is active: instead of asking the remote block manager over Netty,
 * it resolves each block to registered memory and reads it one-sidedly. Spark keeps doing
 * everything around it: flow control, local reads, corruption checks, metrics, and turning
 * a failure reported here into a FetchFailedException for the right map output.
 */
public final class RdmaBlockStoreClient extends BlockStoreClient {
  private final ShuffleTransport transport;
  private final ShuffleTableCache tables;
  private final TransportConf transportConf;
  private final ReaderStats stats = new ReaderStats();

  public RdmaBlockStoreClient(ShuffleTransport transport, ShuffleTableCache tables,
      TransportConf transportConf) {
    this.transport = transport;
    this.tables = tables;
    this.transportConf = transportConf;
  }

  public ReaderStats stats() {
    return stats;
  }

  @Override
  public void fetchBlocks(String host, int port, String execId, String[] blockIds,
      BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
    stats.fetchCalls.incrementAndGet();
    List<BlockFetch.Block> blocks = new ArrayList<>(blockIds.length);
    PeerAddress peer = null;
    for (String id : blockIds) {
      try {
        BlockFetch.Block b = resolve(id, execId);
        if (peer != null && !peer.equals(b.location.peer)) {
          throw new IOException("executor " + execId + " changed its transport address from "
              + peer + " to " + b.location.peer);
        }
        peer = b.location.peer;
        blocks.add(b);
      } catch (IOException | RuntimeException e) {
        stats.failedBlocks.incrementAndGet();
        listener.onBlockFetchFailure(id, e);
      }
    }
    if (blocks.isEmpty()) {
      return;
    }
    TransportChannel channel;
    try {
      channel = transport.connect(peer);
    } catch (IOException | RuntimeException e) {
      IOException failure = new IOException("cannot connect to the " + transport.name()
          + " transport of executor " + execId + " at " + peer + ": " + e.getMessage(), e);
      for (BlockFetch.Block b : blocks) {
        stats.failedBlocks.incrementAndGet();
        listener.onBlockFetchFailure(b.blockId, failure);
      }
      return;
    }
    new BlockFetch(blocks, channel, listener, downloadFileManager, transportConf, stats).start();
  }

  private BlockFetch.Block resolve(String id, String execId) throws IOException {
    BlockId blockId = BlockId.apply(id);
    if (blockId instanceof ShuffleBlockId) {
      ShuffleBlockId s = (ShuffleBlockId) blockId;
      return new BlockFetch.Block(id, s.reduceId(), s.reduceId() + 1,
          tables.locate(s.shuffleId(), s.mapId(), execId));
    }
    if (blockId instanceof ShuffleBlockBatchId) {
      ShuffleBlockBatchId s = (ShuffleBlockBatchId) blockId;
      return new BlockFetch.Block(id, s.startReduceId(), s.endReduceId(),
          tables.locate(s.shuffleId(), s.mapId(), execId));
    }
    throw new IOException("block " + id + " is not a shuffle block; the RDMA shuffle client "
        + "serves only shuffle_* blocks (push-based merged blocks are not supported)");
  }

  @Override
  public void close() {
    // The transport is owned and closed by the executor runtime.
  }
}
