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

  /**
   * The file type bits (S_IFMT of st_mode), the size and the status flags (F_GETFL) of the
   * open file {@code fd}.
   */
  public static long[] stat(int fd) throws IOException {
    long[] out = new long[3];
    int rc = UnixSocketNative.stat(fd, out);
    if (rc < 0) {
      throw FdErrors.of("fstat of descriptor " + fd, rc);
    }
    return out;
  }

  /**
   * True when status flags {@code flags} (from {@link #stat}) are those of a descriptor
   * opened for reading: not O_PATH (which needs no read permission to open) and not
   * write-only. Only such a descriptor proves its sender may read the file.
   */
  public static boolean openForReading(long flags) {
    long accessMode = flags & 3; // O_ACCMODE: 0 read-only, 1 write-only, 2 read-write
    return (flags & O_PATH) == 0 && accessMode != 1;
  }

  /** O_PATH on Linux (x86_64 and arm64). */
  static final long O_PATH = 010000000;

  /** A path that opens the file of {@code fd} again (this process's /proc/self/fd/N). */
  public static Path procPath(int fd) {
    return Paths.get("/proc/self/fd/" + fd);
  }

  /** errno EXDEV: a hard link across filesystems. */
  public static final int EXDEV = 18;

  /**
   * Gives the open file {@code fd} one more name, {@code target} (a hard link through
   * /proc/self/fd/N; the target must not exist): the file then outlives this process's
   * descriptor and every other name it had.
   *
   * @return 0, or the errno of the refusal ({@link #EXDEV}: another filesystem; ENOENT: the
   *     file has no name left; EPERM: fs.protected_hardlinks and a file of another user)
   */
  public static int link(int fd, Path target) throws IOException {
    FdPassLibrary.load();
    return -UnixSocketNative.link(fd, target.toString());
  }

  /** The C library's text for {@code errno}. */
  public static String errorText(int errno) {
    return UnixSocketNative.errorText(errno) + " (errno " + errno + ")";
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
