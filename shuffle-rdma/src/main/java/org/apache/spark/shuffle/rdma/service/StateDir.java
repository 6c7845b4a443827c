/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The directory the node service keeps its outputs in across restarts (journal and links):
 * created 0700 when absent; refused when another uid owns it or its group or others may
 * write it, since whoever writes there decides what the service serves after a restart.
 */
final class StateDir {
  private StateDir() {}

  /** Checks (creating it if absent) {@code dir} for the uid {@code uid}; returns it. */
  static Path open(Path dir, int uid) throws IOException {
    if (!Files.exists(dir)) {
      Files.createDirectories(dir.getParent());
      Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
          PosixFilePermissions.fromString("rwx------")));
    }
    if (!Files.isDirectory(dir)) {
      throw new IOException("state directory " + dir + " is not a directory");
    }
    int owner = (Integer) Files.getAttribute(dir, "unix:uid");
    if (owner != uid) {
      throw new IOException("state directory " + dir + " is owned by uid " + owner
          + ", not by this service's uid " + uid + ": chown it, or choose another with "
          + "--state-dir");
    }
    Set<PosixFilePermission> p = Files.getPosixFilePermissions(dir);
    if (p.contains(PosixFilePermission.GROUP_WRITE)
        || p.contains(PosixFilePermission.OTHERS_WRITE)) {
      throw new IOException("state directory " + dir + " is writable by its group or others ("
          + PosixFilePermissions.toString(p) + "): chmod go-w it");
    }
    return dir;
  }
}
