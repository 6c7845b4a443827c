/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.IOException;
import java.net.SocketTimeoutException;

/** The IOException for a failed libfdpass call: what was done, the errno text, the fix. */
final class FdErrors {
  static final int EPERM = 1;
  static final int ENOENT = 2;
  static final int EACCES = 13;
  static final int EINVAL = 22;
  static final int EPIPE = 32;
  static final int ENAMETOOLONG = 36;
  static final int EPROTO = 71;
  static final int EMSGSIZE = 90;
  static final int EADDRINUSE = 98;
  static final int ECONNRESET = 104;
  static final int ETIMEDOUT = 110;
  static final int ECONNREFUSED = 111;
  static final int ETOOMANYREFS = 109;

  private FdErrors() {}

  static IOException of(String what, int negativeErrno) {
    int errno = -negativeErrno;
    String text = UnixSocketNative.errorText(errno) + " (errno " + errno + ")";
    switch (errno) {
      case ETIMEDOUT:
        return new SocketTimeoutException(what + ": timed out");
      case ENAMETOOLONG:
        return new IOException(what + ": " + text + "; a Unix socket path holds at most 107 "
            + "bytes: use a shorter path");
      case EADDRINUSE:
        return new IOException(what + ": " + text + "; another process listens there, or a "
            + "stale socket file is left: stop the other service or remove the file");
      case ECONNREFUSED:
      case ENOENT:
        return new IOException(what + ": " + text + "; is the node service running "
            + "(bin/shuffle-rdma-service)?");
      case EACCES:
      case EPERM:
        return new IOException(what + ": " + text + "; no permission on the socket file or "
            + "its directory");
      default:
        return new IOException(what + ": " + text);
    }
  }
}
