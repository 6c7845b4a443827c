/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

/** The process at the other end of a Unix socket, as the kernel recorded it (SO_PEERCRED). */
public final class PeerCredentials {
  private final int pid;
  private final int uid;
  private final int gid;

  public PeerCredentials(int pid, int uid, int gid) {
    this.pid = pid;
    this.uid = uid;
    this.gid = gid;
  }

  public int pid() {
    return pid;
  }

  public int uid() {
    return uid;
  }

  public int gid() {
    return gid;
  }

  @Override
  public String toString() {
    return "pid " + pid + " uid " + uid + " gid " + gid;
  }
}
