/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Raw descriptors as ints: opened to be passed, received, inspected and closed. A received
 * descriptor is readable as a file through {@link #procPath}: opening /proc/self/fd/N opens
 * the same file again, even after its last path was deleted (Linux).
 */
public final class Fds {
  /** st_mode's S_IFREG. */
  public static final long REGULAR_FILE = 0100000;

  private Fds() {}

  /** Opens {@code path} read-only (close-on-exec), to pass it on. */
  public static int openRead(Path path) throws IOException {
    FdPassLibrary.load();
    int fd = UnixSocketNative.openRead(path.toString());
    if (fd < 0) {
      throw FdErrors.of("opening " + path, fd);
    }
    return fd;
  }

  /** The file type bits (S_IFMT of st_mode) and the size of the open file {@code fd}. */
  public static long[] stat(int fd) throws IOException {
    long[] out = new long[2];
    int rc = UnixSocketNative.stat(fd, out);
    if (rc < 0) {
      throw FdErrors.of("fstat of descriptor " + fd, rc);
    }
    return out;
  }

  /** A path that opens the file of {@code fd} again (this process's /proc/self/fd/N). */
  public static Path procPath(int fd) {
    return Paths.get("/proc/self/fd/" + fd);
  }

  /** Closes {@code fd}; negative values (no descriptor) are ignored. */
  public static void close(int fd) {
    if (fd >= 0) {
      UnixSocketNative.close(fd);
    }
  }

  /** Closes every descriptor of {@code fds}. */
  public static void closeAll(int[] fds) {
    for (int fd : fds) {
      close(fd);
    }
  }
}
