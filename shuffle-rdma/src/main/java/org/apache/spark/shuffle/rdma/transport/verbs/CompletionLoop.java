/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loop of one completion thread (the verbs transport's {@code CompletionAgent}), free of
 * DiSNI so it can be tested: wait for a CQ event, drain (and so re-arm) the CQ that fired and
 * only that one, and on a periodic tick drain every CQ (a safety net should an event ever be
 * missed), check read timeouts and hand finished channels over for teardown.
 *
 * <p>It cannot die and cannot spin: whatever one channel throws while draining, on the tick
 * or in teardown fails that channel ({@link Served#failDraining}) and is logged rarely per
 * channel, the others are served on; a failing wait is logged rarely and followed by a
 * pause. {@link #runOnce} never throws.
 *
 * <p>Owned by its thread, except {@link #add}. Steady-state it allocates nothing: the served
 * channels sit in arrays and an event's CQ is found by a scan of a long[] (an agent serves a
 * few hundred CQs at most; the scan costs less than the event's system calls).
 */
public final class CompletionLoop {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionLoop.class);

  /** {@link Events#await}: nothing fired within the timeout. */
  public static final long NO_EVENT = 0;
  /** {@link Events#await}: an event came whose CQ cannot be named; every CQ is drained. */
  public static final long UNKNOWN_CQ = -1;
  /** How long one wait for an event lasts, and the pause after a failed wait. */
  public static final int WAIT_MS = 50;
  public static final long TICK_NANOS = 200_000_000L;

  /** The completion channel the loop sleeps on. */
  public interface Events {
    /**
     * Waits up to {@code timeoutMs} for one event and acknowledges it: the fired CQ's handle
     * (&gt; 0), {@link #NO_EVENT} or {@link #UNKNOWN_CQ}.
     */
    long await(int timeoutMs) throws IOException;

    /** After a failed wait, so a broken channel cannot make the loop spin. */
    default void pause(int ms) {
      LockSupport.parkNanos(ms * 1_000_000L);
    }
  }

  /** One channel (one CQ) served by the loop; all calls come from the loop's thread. */
  public interface Served {
    /** The handle {@link Events#await} returns when this channel's CQ fired. */
    long cq();

    /** Drains the CQ and re-arms it (one re-arm per call); may throw. */
    void drain();

    /** Draining (or the tick's checks) threw: fail the channel as its other failures do. */
    void failDraining(Throwable why);

    /** The tick: read timeouts, reads waiting for memory. */
    void checkTimeouts(long now);

    /** True once its CQ may be destroyed: it is then removed and never drained again. */
    boolean readyForTeardown(long now);

    void tearDown();
  }

  private final Events events;
  /** After each pass of drains: hands the collected callbacks to their threads. */
  private final Runnable afterDrain;
  private final LongSupplier clock;
  private final ConcurrentLinkedQueue<Served> added = new ConcurrentLinkedQueue<>();

  private Served[] served = new Served[16];
  private long[] cqs = new long[16];
  /** Per channel: how often it threw, for the rare log. */
  private long[] failures = new long[16];
  private int count;
  private long nextTick;
  private long waitFailures;

  // Written by the loop's thread only; volatile so tests and operators may read them.
  private volatile long rearms;
  private volatile long unmatchedEvents;

  public CompletionLoop(Events events, Runnable afterDrain, LongSupplier clock) {
    this.events = events;
    this.afterDrain = afterDrain;
    this.clock = clock;
    this.nextTick = clock.getAsLong() + TICK_NANOS;
  }

  /** Any thread: starts serving {@code s} on the next wake-up (it is drained, so armed, then). */
  public void add(Served s) {
    added.add(s);
  }

  /** Channels served now (the loop's thread, or once it stopped). */
  public int served() {
    return count;
  }

  /** CQ drains so far, each of which re-armed its CQ. */
  public long rearms() {
    return rearms;
  }

  /** Events whose CQ no served channel owns (each made the loop drain them all). */
  public long unmatchedEvents() {
    return unmatchedEvents;
  }

  /** One wake-up: adopt new channels, wait, drain what fired, the tick when due. */
  public void runOnce() {
    try {
      adopt();
      boolean failedWait = false;
      long fired;
      try {
        fired = events.await(WAIT_MS);
      } catch (Throwable t) {
        failedWait = true;
        fired = UNKNOWN_CQ;
        long n = ++waitFailures;
        if (RareLog.due(n)) {
          LOG.error("verbs: waiting for completion events failed ({} time(s) so far); draining "
              + "every completion queue, waiting again in {} ms", n, WAIT_MS, t);
        }
      }
      if (fired != NO_EVENT) {
        int i = fired == UNKNOWN_CQ ? -1 : indexOf(fired);
        if (i >= 0) {
          drain(i);
        } else {
          if (fired != UNKNOWN_CQ) {
            unmatchedEvents = unmatchedEvents + 1; // a CQ torn down after it fired
          }
          drainAll();
        }
        flush();
      }
      long now = clock.getAsLong();
      if (now - nextTick >= 0) {
        nextTick = now + TICK_NANOS;
        drainAll();
        flush();
        tick(now);
      }
      if (failedWait) {
        events.pause(WAIT_MS);
      }
    } catch (Throwable t) {
      // Only the loop's own bookkeeping could get here; the thread must live on regardless.
      LOG.error("verbs: completion loop failed; continuing", t);
      events.pause(WAIT_MS);
    }
  }

  private void adopt() {
    Served s;
    boolean any = false;
    while ((s = added.poll()) != null) {
      any = true;
      if (count == served.length) {
        served = Arrays.copyOf(served, count * 2);
        cqs = Arrays.copyOf(cqs, count * 2);
        failures = Arrays.copyOf(failures, count * 2);
      }
      served[count] = s;
      cqs[count] = s.cq();
      failures[count] = 0;
      count++;
      drain(count - 1); // arms it: no event can come before
    }
    if (any) {
      flush(); // reads it completed before it was adopted must not wait for the next event
    }
  }

  private int indexOf(long cq) {
    for (int i = 0; i < count; i++) {
      if (cqs[i] == cq) {
        return i;
      }
    }
    return -1;
  }

  private void drainAll() {
    for (int i = 0; i < count; i++) {
      drain(i);
    }
  }

  private void drain(int i) {
    rearms = rearms + 1;
    try {
      served[i].drain();
    } catch (Throwable t) {
      contain(i, t, "handling its completions");
    }
  }

  private void flush() {
    try {
      afterDrain.run();
    } catch (Throwable t) {
      LOG.error("verbs: handing completed reads to the callback threads failed", t);
    }
  }

  /** Read timeouts, and handing finished channels over for teardown. */
  private void tick(long now) {
    for (int i = count - 1; i >= 0; i--) {
      Served s = served[i];
      boolean done;
      try {
        s.checkTimeouts(now);
        done = s.readyForTeardown(now);
      } catch (Throwable t) {
        contain(i, t, "checking its reads");
        continue;
      }
      if (done) {
        remove(i); // never drained again: its CQ may now be destroyed
        try {
          s.tearDown();
        } catch (Throwable t) {
          LOG.error("verbs: tearing down {} failed", s, t);
        }
      }
    }
  }

  /** Order does not matter: the last channel takes the removed one's place. */
  private void remove(int i) {
    int last = --count;
    served[i] = served[last];
    cqs[i] = cqs[last];
    failures[i] = failures[last];
    served[last] = null;
  }

  /** One channel threw: fail it, log rarely, serve the others on. */
  private void contain(int i, Throwable t, String doing) {
    Served s = served[i];
    long n = ++failures[i];
    if (RareLog.due(n)) {
      LOG.error("verbs: {} threw while {} ({} time(s)); failing it, the other channels are "
          + "not affected", s, doing, n, t);
    }
    try {
      s.failDraining(t);
    } catch (Throwable again) {
      if (RareLog.due(n)) {
        LOG.error("verbs: failing {} threw too", s, again);
      }
    }
  }
}
