/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.concurrent.TimeUnit;

/**
 * When to probe one inbound connection and what its probe's completion means. The serving side
 * of an RC connection posts nothing (the reader's NIC READs from ours), so it never learns that
 * a reader vanished without a disconnect; a probe is a zero-length RDMA WRITE to the reader's
 * queue pair (no memory, no rkey: IB spec C9-88), which a live reader's NIC acknowledges and a
 * vanished one never does: after the queue pair's transport retries it completes with an
 * error, and the connection is torn down. At most one probe is outstanding. Pure logic, one
 * instance per inbound connection, used by the RDMA-CM thread only.
 */
public final class KeepaliveProbe {
  /** What the caller does now. */
  public enum Action { NOTHING, POST, TEAR_DOWN }

  /** No completion at all this long after a post: the device is not answering either. */
  static final long OVERDUE_NANOS = TimeUnit.SECONDS.toNanos(60);

  private final long intervalNanos;
  private long lastPost;
  private boolean outstanding;

  /** @param intervalMs spark.shuffle.rdma.verbs.keepaliveInterval (positive) */
  public KeepaliveProbe(long intervalMs, long nowNanos) {
    if (intervalMs <= 0) {
      throw new IllegalArgumentException("keepalive interval must be positive: " + intervalMs);
    }
    this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMs);
    this.lastPost = nowNanos;
  }

  /**
   * One step at {@code nowNanos}; {@code completion} is the work-completion status of the
   * outstanding probe if one arrived since the last step, else -1.
   */
  public Action step(long nowNanos, int completion) {
    if (outstanding) {
      if (completion < 0) {
        return nowNanos - lastPost > intervalNanos + OVERDUE_NANOS ? Action.TEAR_DOWN
            : Action.NOTHING;
      }
      outstanding = false;
      if (completion != WcStatus.SUCCESS) {
        return Action.TEAR_DOWN;
      }
    }
    if (nowNanos - lastPost >= intervalNanos) {
      outstanding = true;
      lastPost = nowNanos;
      return Action.POST;
    }
    return Action.NOTHING;
  }

  /** True while a posted probe has not completed. */
  public boolean outstanding() {
    return outstanding;
  }
}
