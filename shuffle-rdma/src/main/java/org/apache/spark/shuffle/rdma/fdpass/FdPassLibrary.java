/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import java.io.IOException;
import java.nio.file.Path;

import org.apache.spark.shuffle.rdma.transport.verbs.loader.BundledLibrary;

/**
 * Loads libfdpass.so, packed in the plugin jar next to libdisni.so, once per JVM: extracted
 * to the per-user directory and checked against the SHA-256 the build recorded (as
 * BundledLibrary does for libdisni), then loaded into this class's loader. It needs only
 * libc, so it loads on hosts without rdma-core. The outcome, or why it failed, is kept: a
 * failed load is not retried.
 */
public final class FdPassLibrary {
  /** What fdpass_version() returns (FDPASS_VERSION in fdpass.h). */
  public static final String EXPECTED = "shuffle-rdma-fdpass 3";
  static final String RESOURCE = "native/linux-x86_64/libfdpass.so";

  private static String failure;
  private static boolean loaded;

  private FdPassLibrary() {}

  /** Loads the library on first call; throws the same reason on every call after a failure. */
  public static synchronized void load() throws IOException {
    if (loaded) {
      return;
    }
    if (failure == null) {
      failure = tryLoad();
      loaded = failure == null;
    }
    if (!loaded) {
      throw new IOException(failure);
    }
  }

  private static String tryLoad() {
    Path file;
    try {
      file = BundledLibrary.extractVerified(FdPassLibrary.class.getClassLoader(), RESOURCE,
          "libfdpass");
    } catch (IOException | RuntimeException e) {
      return "libfdpass.so (Unix socket descriptor passing) could not be prepared: "
          + e.getMessage();
    }
    try {
      System.load(file.toString());
      String version = UnixSocketNative.version();
      if (!EXPECTED.equals(version)) {
        return file + " is '" + version + "', this plugin needs '" + EXPECTED
            + "'; a stale extracted copy? remove it";
      }
      return null;
    } catch (LinkageError e) {
      return "libfdpass.so failed to load from " + file + ": " + e.getMessage()
          + " (one class loader per JVM may load it; load the plugin jar once)";
    }
  }
}
