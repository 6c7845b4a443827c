/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One connected AF_UNIX SOCK_SEQPACKET socket: whole messages of at most {@link
 * #MAX_MESSAGE} bytes, each with up to {@link #MAX_FDS} file descriptors (SCM_RIGHTS).
 * A message arrives whole or not at all, so a reader never sees half of one. Descriptors
 * are plain ints (no Java API passes descriptors); whoever receives them owns them and
 * closes them with {@link Fds#close}. One thread sends and one receives at a time.
 */
public final class UnixSocket implements Closeable {
  /** Most descriptors one message may carry (FDPASS_MAX_FDS). */
  public static final int MAX_FDS = 8;
  /** Longest message (FDPASS_MAX_MESSAGE). */
  public static final int MAX_MESSAGE = 65536;

  private final int fd;
  private final String name;
  /** Set before the descriptor is closed: its number may then name another file. */
  private volatile boolean closed;

  UnixSocket(int fd, String name) {
    this.fd = fd;
    this.name = name;
  }

  /** Connects to the socket a {@link UnixServerSocket} listens on at {@code path}. */
  public static UnixSocket connect(Path path) throws IOException {
    FdPassLibrary.load();
    int fd = UnixSocketNative.connect(path.toString());
    if (fd < 0) {
      throw FdErrors.of("connecting to " + path, fd);
    }
    return new UnixSocket(fd, path.toString());
  }

  /** Sends {@code message} with {@code fds} (the sender keeps its own copies open). */
  public void send(byte[] message, int... fds) throws IOException {
    if (message.length == 0 || message.length > MAX_MESSAGE) {
      throw new IOException("a message must hold 1 to " + MAX_MESSAGE + " bytes, not "
          + message.length);
    }
    if (fds.length > MAX_FDS) {
      throw new IOException("a message carries at most " + MAX_FDS + " descriptors, not "
          + fds.length);
    }
    checkOpen();
    int rc = UnixSocketNative.send(fd, message, message.length, fds, fds.length);
    if (rc < 0) {
      throw FdErrors.of("sending to " + name, rc);
    }
  }

  /**
   * The next message with at most {@code maxFds} descriptors, or null when none came within
   * {@code timeoutMs} (negative: wait).
   *
   * @throws EOFException the peer closed the connection
   * @throws RefusedMessageException a message carrying more than maxFds descriptors,
   *     longer than {@code maxLength} bytes, or other control data: discarded with all its
   *     descriptors; the connection stays usable
   */
  public Message receive(int maxLength, int maxFds, int timeoutMs) throws IOException {
    if (maxLength <= 0 || maxLength > MAX_MESSAGE || maxFds < 0 || maxFds > MAX_FDS) {
      throw new IllegalArgumentException("maxLength " + maxLength + ", maxFds " + maxFds);
    }
    checkOpen();
    byte[] buf = new byte[maxLength];
    int[] fds = new int[maxFds];
    int n = UnixSocketNative.receive(fd, buf, fds, timeoutMs);
    if (n == 0) {
      throw new EOFException("the peer on " + name + " closed the connection");
    }
    if (n == -FdErrors.ETIMEDOUT) {
      return null;
    }
    if (n == -FdErrors.ETOOMANYREFS) {
      throw new RefusedMessageException("refused a message on " + name + ": it carried more than "
          + maxFds + " file descriptors (all closed)");
    }
    if (n == -FdErrors.EMSGSIZE) {
      throw new RefusedMessageException("refused a message on " + name + ": longer than " + maxLength
          + " bytes (its descriptors closed)");
    }
    if (n == -FdErrors.EPROTO) {
      throw new RefusedMessageException("refused a message on " + name + ": control data other than "
          + "file descriptors");
    }
    if (n < 0) {
      throw FdErrors.of("receiving on " + name, n);
    }
    int count = 0;
    while (count < maxFds && fds[count] >= 0) {
      count++;
    }
    return new Message(Arrays.copyOf(buf, n), Arrays.copyOf(fds, count));
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("the connection to " + name + " is closed");
    }
  }

  /** Who is connected: the kernel's record of the peer at connect time. */
  public PeerCredentials peer() throws IOException {
    checkOpen();
    int[] out = new int[3];
    int rc = UnixSocketNative.peerCredentials(fd, out);
    if (rc < 0) {
      throw FdErrors.of("reading the peer credentials of " + name, rc);
    }
    return new PeerCredentials(out[0], out[1], out[2]);
  }

  /** Wakes a thread blocked in {@link #receive} (it sees the peer closed). */
  public void shutdown() {
    synchronized (this) {
      if (!closed) {
        UnixSocketNative.shutdown(fd);
      }
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      UnixSocketNative.close(fd);
    }
  }

  /** One received message: its bytes and the descriptors it carried, now the caller's. */
  public static final class Message {
    private final byte[] body;
    private final int[] fds;

    Message(byte[] body, int[] fds) {
      this.body = body;
      this.fds = fds;
    }

    public byte[] body() {
      return body;
    }

    public int[] fds() {
      return fds;
    }
  }
}
