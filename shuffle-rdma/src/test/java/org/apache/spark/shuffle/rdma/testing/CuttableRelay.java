/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on loopback between a client and a server, standing in for the wire: it can
 * reset every connection it carries once a number of bytes came back from the server (a
 * blip mid-read: the peer lives on, a reconnect works), and stop listening (the peer is
 * gone: a reconnect is refused).
 */
public final class CuttableRelay implements AutoCloseable {
  private final ServerSocket listener;
  private final String targetHost;
  private final int targetPort;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicLong fromServer = new AtomicLong();
  private final AtomicLong cutAt = new AtomicLong(Long.MAX_VALUE);
  /** Connections accepted so far. */
  public final AtomicInteger connections = new AtomicInteger();
  /** Times every connection was reset. */
  public final AtomicInteger cuts = new AtomicInteger();

  public CuttableRelay(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    Thread t = new Thread(this::acceptLoop, "relay-accept");
    t.setDaemon(true);
    t.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** Resets every connection once {@code bytes} more bytes came back from the server. */
  public void cutAfter(long bytes) {
    cutAt.set(fromServer.get() + bytes);
  }

  /** Resets every connection now (RST, as a failed link or a dead peer's kernel sends). */
  public void cutAll() {
    cuts.incrementAndGet();
    for (Socket s : open) {
      reset(s);
    }
  }

  /** Stops listening and resets every connection: later connects are refused. */
  public void refuseFromNowOn() {
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing
    }
    cutAll();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket in = listener.accept();
        Socket out = new Socket(targetHost, targetPort);
        connections.incrementAndGet();
        open.add(in);
        open.add(out);
        pump(in, out, false);
        pump(out, in, true);
      } catch (IOException e) {
        return; // listener closed
      }
    }
  }

  private void pump(Socket from, Socket to, boolean countBack) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      try {
        InputStream is = from.getInputStream();
        OutputStream os = to.getOutputStream();
        int n;
        while ((n = is.read(buf)) > 0) {
          os.write(buf, 0, n);
          os.flush();
          if (countBack && fromServer.addAndGet(n) >= cutAt.get()) {
            cutAt.set(Long.MAX_VALUE);
            cutAll();
            return;
          }
        }
      } catch (IOException ignored) {
        // reset or closed
      } finally {
        reset(from);
        reset(to);
      }
    }, "relay-pump");
    t.setDaemon(true);
    t.start();
  }

  private void reset(Socket s) {
    open.remove(s);
    try {
      s.setSoLinger(true, 0);
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    refuseFromNowOn();
  }
}
