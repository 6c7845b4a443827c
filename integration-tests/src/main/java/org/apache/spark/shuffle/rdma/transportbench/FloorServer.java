/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.StandardOpenOption;

/**
 * The simplest server of blocks over TCP, as a reference: what the kernel charges for sending
 * the bytes with no server work around them, so the other columns can be read against it
 * (where a server's CPU is at this one's, what is left is the kernel's TCP path). Not always
 * the least: for small blocks gathered writes cost less than a call per block (the plugin's
 * tcp server at 4 KiB), and an event loop's non-blocking sendfile can cost the kernel less
 * than blocking sends.
 *
 * <p>No framing, no event loop, no per-block request: one blocking thread per connection
 * reads a 16-byte request (block size int, count int, first block index long, as
 * {@link SparkBlockServer}'s open request) and sends the count blocks back to back, each with one blocking {@code sendfile}
 * ({@link FileChannel#transferTo}), so the client knows every boundary from the request.
 * Nothing a real shuffle server needs (errors, authentication, many clients) is here.
 */
final class FloorServer implements AutoCloseable {
  private final ServerSocketChannel listener;
  private final FileChannel file;
  private final long length;
  private final Thread acceptor;

  FloorServer(File served, String bindHost) throws IOException {
    this.file = FileChannel.open(served.toPath(), StandardOpenOption.READ);
    this.length = served.length();
    this.listener = ServerSocketChannel.open().bind(new InetSocketAddress(bindHost, 0));
    this.acceptor = new Thread(this::acceptLoop, "floor-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() throws IOException {
    return ((InetSocketAddress) listener.getLocalAddress()).getPort();
  }

  private void acceptLoop() {
    while (listener.isOpen()) {
      try {
        SocketChannel c = listener.accept();
        Thread t = new Thread(() -> serve(c), "floor-serve");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(SocketChannel c) {
    ByteBuffer request = ByteBuffer.allocateDirect(16);
    try (SocketChannel ch = c) {
      ch.socket().setTcpNoDelay(true);
      while (true) {
        request.clear();
        while (request.hasRemaining()) {
          if (ch.read(request) < 0) {
            return;
          }
        }
        int size = request.getInt(0);
        int count = request.getInt(4);
        long first = request.getLong(8);
        for (int i = 0; i < count; i++) {
          long at = PatternFile.offsetOf(first + i, size, length);
          for (long sent = 0; sent < size; ) {
            sent += file.transferTo(at + sent, size - sent, ch);
          }
        }
      }
    } catch (IOException e) {
      // the client went away: the run is over
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    file.close();
  }
}
