/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.network.TransportContext;
import org.apache.spark.network.buffer.FileSegmentManagedBuffer;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.server.OneForOneStreamManager;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.StreamManager;
import org.apache.spark.network.server.TransportServer;
import org.apache.spark.network.util.TransportConf;

/**
 * Spark's own serving path for shuffle files, as its block server does it: an open request
 * (one RPC, like OpenBlocks) registers a stream of {@link FileSegmentManagedBuffer}s with
 * Spark's {@link OneForOneStreamManager}, and the client fetches them as chunks. Every block
 * costs the server a chunk request to decode, a file segment to open and send, on its
 * network threads. Open request: (block size int, count int, first block index long).
 */
final class SparkBlockServer implements AutoCloseable {
  private final TransportContext context;
  private final TransportServer server;

  SparkBlockServer(TransportConf conf, File file, String bindHost) {
    OneForOneStreamManager streams = new OneForOneStreamManager();
    long length = file.length();
    RpcHandler handler = new RpcHandler() {
      @Override
      public void receive(TransportClient client, ByteBuffer message,
          RpcResponseCallback callback) {
        int size = message.getInt();
        int count = message.getInt();
        long first = message.getLong();
        List<ManagedBuffer> blocks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          blocks.add(new FileSegmentManagedBuffer(conf, file,
              PatternFile.offsetOf(first + i, size, length), size));
        }
        long streamId = streams.registerStream("bench", blocks.iterator(), client.getChannel());
        ByteBuffer reply = ByteBuffer.allocate(8).putLong(0, streamId);
        callback.onSuccess(reply);
      }

      @Override
      public StreamManager getStreamManager() {
        return streams;
      }
    };
    this.context = new TransportContext(conf, handler);
    this.server = context.createServer(bindHost, 0, new ArrayList<>());
  }

  int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.close();
    context.close();
  }
}
