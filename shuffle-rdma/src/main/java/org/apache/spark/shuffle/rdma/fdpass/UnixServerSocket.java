/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A listening AF_UNIX SOCK_SEQPACKET socket at a path. {@link #close} wakes a thread blocked
 * in {@link #accept} and removes the socket file.
 */
public final class UnixServerSocket implements Closeable {
  private final int fd;
  private final Path path;
  private volatile boolean closed;

  private UnixServerSocket(int fd, Path path) {
    this.fd = fd;
    this.path = path;
  }

  /**
   * Listens at {@code path}. A socket file left by a process that is gone (nobody accepts on
   * it) is replaced; one that a live process listens on is refused.
   */
  public static UnixServerSocket listen(Path path, int backlog) throws IOException {
    FdPassLibrary.load();
    int fd = UnixSocketNative.listen(path.toString(), backlog);
    if (fd == -FdErrors.EADDRINUSE && stale(path)) {
      Files.deleteIfExists(path);
      fd = UnixSocketNative.listen(path.toString(), backlog);
    }
    if (fd < 0) {
      throw FdErrors.of("listening on " + path, fd);
    }
    return new UnixServerSocket(fd, path);
  }

  /** True when path is a socket file nobody listens on (a connect is refused). */
  private static boolean stale(Path path) {
    int probe = UnixSocketNative.connect(path.toString());
    if (probe >= 0) {
      UnixSocketNative.close(probe);
      return false;
    }
    return probe == -FdErrors.ECONNREFUSED;
  }

  public Path path() {
    return path;
  }

  /** The next connection, or null when none came within {@code timeoutMs} (negative: wait). */
  public UnixSocket accept(int timeoutMs) throws IOException {
    if (closed) {
      throw new IOException("the socket at " + path + " was closed"); // its number may be reused
    }
    int c = UnixSocketNative.accept(fd, timeoutMs);
    if (c == -FdErrors.ETIMEDOUT) {
      return null;
    }
    if (c < 0) {
      synchronized (this) {
        if (closed) {
          throw new IOException("the socket at " + path + " was closed");
        }
      }
      throw FdErrors.of("accepting on " + path, c);
    }
    return new UnixSocket(c, path.toString());
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      UnixSocketNative.shutdown(fd); // wakes accept
      UnixSocketNative.close(fd);
    }
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      // the directory went away or is not ours: nothing to clean then
    }
  }
}
