/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * What happens to each read of one RC connection when it completes or the connection breaks.
 * An RC queue pair goes to the error state on the first READ that fails (a revoked key, a
 * bounds error), and the device then completes every other READ posted on it with
 * IBV_WC_WR_FLUSH_ERR: those reads did nothing wrong. So:
 *
 * <ul>
 *   <li>a completion with its own error (anything but success and flush) fails that read
 *       only, and breaks the connection <em>recoverably</em>;
 *   <li>a flushed read of a recoverably broken connection is posted again, once, on a fresh
 *       connection to the same peer; flushed there again, it fails;
 *   <li>reads still waiting in the channel (never posted) move to the fresh connection too;
 *   <li>a connection that broke without a read's error (timeout, disconnect, device removal,
 *       failed post, close) fails all its reads: there is nothing to isolate.
 * </ul>
 *
 * <p>One instance per connection; the reads that are already second attempts are handed in
 * by the predecessor ({@link #markRetry}). Pure logic, guarded by the channel's lock, tested
 * with a fake completion stream.
 *
 * @param <R> the read type (compared by identity)
 */
public final class ReadRecovery<R> {

  /** What to do with a read. */
  public enum Verdict { DELIVER, FAIL, RETRY }

  /** How the connection stands. */
  public enum State { ACTIVE, BROKEN_BY_READ_ERROR, BROKEN }

  private final Set<R> retries = Collections.newSetFromMap(new IdentityHashMap<>());
  private State state = State.ACTIVE;

  public State state() {
    return state;
  }

  /** {@code r} is a second attempt: flushed again, it fails. */
  public void markRetry(R r) {
    retries.add(r);
  }

  /** True when {@code r} was already retried once. */
  public boolean isRetry(R r) {
    return retries.contains(r);
  }

  /**
   * A completion of posted read {@code r}. The first completion with its own error moves
   * ACTIVE to BROKEN_BY_READ_ERROR (the caller then breaks the connection and starts a fresh
   * one for the reads this returns RETRY for).
   */
  public Verdict onCompletion(R r, int wcStatus) {
    boolean retry = retries.remove(r);
    if (wcStatus == WcStatus.SUCCESS) {
      return Verdict.DELIVER;
    }
    if (wcStatus != WcStatus.WR_FLUSH_ERR) {
      if (state == State.ACTIVE) {
        state = State.BROKEN_BY_READ_ERROR;
      }
      return Verdict.FAIL;
    }
    return state == State.BROKEN_BY_READ_ERROR && !retry ? Verdict.RETRY : Verdict.FAIL;
  }

  /**
   * A flush completion can only follow a broken connection; one seen while ACTIVE means the
   * connection broke for a reason not yet reported (the CM event may trail the completions):
   * the caller reports that as {@link #onConnectionFailure} first.
   */
  public boolean needsFailureBefore(int wcStatus) {
    return state == State.ACTIVE && wcStatus == WcStatus.WR_FLUSH_ERR;
  }

  /** The connection broke without a read's own error; no effect once broken. */
  public void onConnectionFailure() {
    if (state == State.ACTIVE) {
      state = State.BROKEN;
    }
  }

  /**
   * A read that was waiting in the channel (never posted) at the break: it moves to the
   * fresh connection unless it already is a second attempt (every read gets at most one more
   * connection, so a peer that keeps breaking cannot keep a read alive).
   */
  public Verdict onDropped(R r) {
    boolean retry = retries.remove(r);
    if (state == State.BROKEN_BY_READ_ERROR) {
      return retry ? Verdict.FAIL : Verdict.RETRY;
    }
    return Verdict.FAIL;
  }

  /** A read that never completed before teardown (the device stopped answering). */
  public Verdict onAbandoned(R r) {
    retries.remove(r);
    return Verdict.FAIL;
  }

  /** Reads still marked as retries (for leak checks in tests). */
  public int retriesTracked() {
    return retries.size();
  }
}
