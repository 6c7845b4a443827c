/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client of {@link FloorServer}: writes one 16-byte request per group of blocks and reads the
 * blocks back to back on one thread into one reused buffer, checking each as the other
 * clients do. Requests stay in flight under the same bound as the other paths.
 */
final class FloorSource implements TransportBench.Source {
  private final SocketChannel channel;
  private final long fileLength;
  private final AtomicLong requests = new AtomicLong();
  private final LinkedBlockingQueue<Object[]> pending = new LinkedBlockingQueue<>();
  private final Thread reader;
  private final ByteBuffer request = ByteBuffer.allocateDirect(16);

  FloorSource(String host, int port, long fileLength) throws IOException {
    this.fileLength = fileLength;
    this.channel = SocketChannel.open(new InetSocketAddress(host, port));
    channel.socket().setTcpNoDelay(true);
    this.reader = new Thread(this::readLoop, "floor-read");
    reader.setDaemon(true);
    reader.start();
  }

  @Override
  public synchronized void fetch(int size, int count, long first,
      TransportBench.RequestDone done) {
    pending.add(new Object[] {size, count, first, done});
    requests.incrementAndGet();
    request.clear();
    request.putInt(size).putInt(count).putLong(first).flip();
    try {
      while (request.hasRemaining()) {
        channel.write(request);
      }
    } catch (IOException e) {
      throw new IllegalStateException("floor request failed", e);
    }
  }

  private void readLoop() {
    ByteBuffer block = ByteBuffer.allocateDirect(1);
    try {
      while (true) {
        Object[] p = pending.take();
        int size = (Integer) p[0];
        int count = (Integer) p[1];
        long first = (Long) p[2];
        if (block.capacity() < size) {
          block = ByteBuffer.allocateDirect(size);
        }
        String problem = null;
        for (int i = 0; i < count; i++) {
          block.clear().limit(size);
          while (block.hasRemaining()) {
            if (channel.read(block) < 0) {
              throw new IOException("server closed the connection");
            }
          }
          block.flip();
          String why = PatternFile.check(block, PatternFile.offsetOf(first + i, size,
              fileLength), size);
          if (why != null && problem == null) {
            problem = why;
          }
        }
        ((TransportBench.RequestDone) p[3]).blocks(count, problem);
      }
    } catch (InterruptedException | IOException e) {
      Object[] p;
      while ((p = pending.poll()) != null) {
        ((TransportBench.RequestDone) p[3]).blocks((Integer) p[1], "floor: " + e);
      }
    }
  }

  @Override
  public long requests() {
    return requests.get();
  }

  @Override
  public void close() throws IOException {
    channel.close();
    reader.interrupt();
  }
}
