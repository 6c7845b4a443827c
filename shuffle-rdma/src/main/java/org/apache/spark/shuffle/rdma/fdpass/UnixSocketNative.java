/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

/**
 * The calls of libfdpass.so (fdpass.c, fdpass_jni.c). Each returns a value >= 0 or the
 * negated errno; {@link UnixSocket} and {@link UnixServerSocket} turn failures into
 * IOExceptions. Loaded only through {@link FdPassLibrary#load}.
 */
final class UnixSocketNative {
  private UnixSocketNative() {}

  static native String version();

  static native String errorText(int errno);

  static native int maxFds();

  static native int maxMessage();

  static native int listen(String path, int backlog);

  static native int connect(String path);

  static native int openRead(String path);

  /** A connection, or -ETIMEDOUT after timeoutMs (negative: wait). */
  static native int accept(int fd, int timeoutMs);

  static native int send(int fd, byte[] msg, int len, int[] fds, int nfds);

  /** The message length (0: peer closed), or -errno; fds gets the descriptors, the rest -1. */
  static native int receive(int fd, byte[] buf, int[] fds, int timeoutMs);

  /** out: pid, uid, gid. */
  static native int peerCredentials(int fd, int[] out);

  /** out: file type bits (S_IFMT), size, status flags (F_GETFL). */
  static native int stat(int fd, long[] out);

  /** fdpass_link: 0 or -errno. */
  static native int link(int fd, String target);

  static native int shutdown(int fd);

  static native int close(int fd);
}
