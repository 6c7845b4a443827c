/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

/**
 * When a read that found the receive pool full stops waiting for it (one per channel,
 * guarded by the channel's lock). Pool memory comes back when reads complete and when tasks
 * release fetched blocks; the second may never happen while the waiting read is needed
 * first (a task that zips two shuffles consumes one input whole while the other's fetched
 * blocks sit in the pool). Waiting is right while reads on the wire hold pool memory (it
 * comes back as they complete: a busy pool, as on any slow or loaded fabric); the clock runs
 * only while none does, all of the pool held by unconsumed blocks, and past
 * {@code waitNanos} the read lands outside the pool instead.
 */
public final class PoolWait {
  private static final long NOT_WAITING = Long.MIN_VALUE;

  private final long waitNanos;
  private long since = NOT_WAITING;

  public PoolWait(long waitNanos) {
    if (waitNanos < 0) {
      throw new IllegalArgumentException("wait must not be negative: " + waitNanos);
    }
    this.waitNanos = waitNanos;
  }

  /**
   * The head read found no pool memory at {@code now}: true once it (or the reads before it
   * on this channel, with no pool memory found in between) waited {@code waitNanos}.
   */
  public boolean givesUp(long now) {
    if (since == NOT_WAITING) {
      since = now;
    }
    return now - since >= waitNanos;
  }

  /** A read got pool memory: the next shortage starts a new wait. */
  public void memoryFound() {
    since = NOT_WAITING;
  }

  /** Whether a shortage is being waited out (for tests and the agent's tick). */
  public boolean waiting() {
    return since != NOT_WAITING;
  }
}
