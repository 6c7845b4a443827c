/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which failed registrations another mapping of the same file can fix. A kernel that pins
 * READ registrations with FOLL_WRITE (before 6.2) refuses a shared read-only mapping with
 * EFAULT; the shared read-write mapping, and as a last resort a private copy, then work.
 * Every other failure (ENOMEM at the locked-memory limit, EAGAIN, a closed transport, a bad
 * handle) is about resources or state, not the mapping: another mapping would not help, and
 * a private copy would pin twice the memory exactly when memlock has run out. Those fail the
 * registration (the output is then served unregistered). Pure; the errno comes from the
 * native layer's message, "... failed: <text> (errno N)".
 */
public final class MappingRefusal {
  static final int EFAULT = 14;
  private static final Pattern ERRNO = Pattern.compile("\\(errno (\\d+)\\)");

  private MappingRefusal() {}

  /**
   * The mode to try after registering a {@code failed} mapping failed with {@code message},
   * or null when no other mapping can help.
   */
  public static MapModeChoice.Mode next(MapModeChoice.Mode failed, String message) {
    if (errno(message) != EFAULT) {
      return null;
    }
    switch (failed) {
      case SHARED:
        return MapModeChoice.Mode.SHARED_WRITABLE;
      case SHARED_WRITABLE:
        return MapModeChoice.Mode.PRIVATE;
      default:
        return null;
    }
  }

  /** True when {@code message} reports the kernel refusing to pin the mapping (EFAULT). */
  public static boolean isPinRefusal(String message) {
    return errno(message) == EFAULT;
  }

  /** The errno the native layer reported in {@code message} (the last one), or -1. */
  static int errno(String message) {
    if (message == null) {
      return -1;
    }
    Matcher m = ERRNO.matcher(message);
    int found = -1;
    while (m.find()) {
      found = Integer.parseInt(m.group(1));
    }
    return found;
  }
}
