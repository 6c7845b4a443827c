/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The completion thread's loop without a device: a scripted event source and channels that
 * count their drains (each drain re-arms the channel's CQ once).
 */
class CompletionLoopTest {

  /** Events handed out one per wait; nothing left: a timeout. */
  private static final class Script implements CompletionLoop.Events {
    final ArrayDeque<Object> next = new ArrayDeque<>();
    int pauses;
    int waits;

    @Override
    public long await(int timeoutMs) throws IOException {
      waits++;
      Object o = next.poll();
      if (o instanceof IOException) {
        throw (IOException) o;
      }
      return o == null ? CompletionLoop.NO_EVENT : (Long) o;
    }

    @Override
    public void pause(int ms) {
      assertEquals(CompletionLoop.WAIT_MS, ms);
      pauses++;
    }
  }

  private static final class Channel implements CompletionLoop.Served {
    final long cq;
    int drains;
    int timeoutChecks;
    int tearDowns;
    RuntimeException drainThrows;
    Error checkThrows;
    boolean finished;
    Throwable failedWith;
    int failures;

    Channel(long cq) {
      this.cq = cq;
    }

    @Override
    public long cq() {
      return cq;
    }

    @Override
    public void drain() {
      drains++;
      if (drainThrows != null) {
        throw drainThrows;
      }
    }

    @Override
    public void failDraining(Throwable why) {
      failedWith = why;
      failures++;
    }

    @Override
    public void checkTimeouts(long now) {
      timeoutChecks++;
      if (checkThrows != null) {
        throw checkThrows;
      }
    }

    @Override
    public boolean readyForTeardown(long now) {
      return finished;
    }

    @Override
    public void tearDown() {
      tearDowns++;
    }

    @Override
    public String toString() {
      return "channel cq " + cq;
    }
  }

  private final AtomicLong clock = new AtomicLong();
  private final Script events = new Script();
  private int flushes;
  private CompletionLoop loop;
  private Channel a;
  private Channel b;
  private Channel c;

  @BeforeEach
  void threeChannels() {
    loop = new CompletionLoop(events, () -> flushes++, clock::get);
    a = new Channel(0x4000001000001L);
    b = new Channel(0x4000001000002L);
    c = new Channel(0x4000002000003L);
    loop.add(a);
    loop.add(b);
    loop.add(c);
    loop.runOnce(); // adopts them: each is drained (armed) once
    assertEquals(3, loop.served());
    assertEquals(1, a.drains);
    assertEquals(1, b.drains);
    assertEquals(1, c.drains);
    assertEquals(3, loop.rearms());
    assertEquals(1, flushes, "what the adoption drains completed goes out at once");
  }

  private void fire(long cq) {
    events.next.add(cq);
    loop.runOnce();
  }

  private void tick() {
    clock.addAndGet(CompletionLoop.TICK_NANOS);
    loop.runOnce();
  }

  @Test
  void onlyTheCqThatFiredIsDrainedAndRearmed() {
    fire(b.cq);
    assertEquals(1, a.drains, "a did not fire");
    assertEquals(2, b.drains);
    assertEquals(1, c.drains, "c did not fire");
    fire(c.cq);
    fire(b.cq);
    assertEquals(1, a.drains);
    assertEquals(3, b.drains);
    assertEquals(2, c.drains);
    assertEquals(6, loop.rearms(), "3 at adoption, then one per event");
    assertEquals(0, loop.unmatchedEvents());
  }

  @Test
  void aTimeoutDrainsNothingUntilTheTick() {
    int flushed = flushes;
    for (int i = 0; i < 3; i++) {
      loop.runOnce();
    }
    assertEquals(3, loop.rearms(), "no event, no tick: no CQ touched");
    assertEquals(flushed, flushes);
    assertEquals(0, a.timeoutChecks);
    tick();
    assertEquals(6, loop.rearms(), "the tick drains every CQ, in case an event was missed");
    assertEquals(2, a.drains);
    assertEquals(2, b.drains);
    assertEquals(2, c.drains);
    assertEquals(1, a.timeoutChecks);
    assertEquals(1, c.timeoutChecks);
  }

  @Test
  void aChannelThatThrowsIsFailedAndTheOthersAreServed() {
    b.drainThrows = new IllegalStateException("callback bug");
    fire(b.cq);
    assertSame(b.drainThrows, b.failedWith, "the channel whose draining threw is failed");
    fire(a.cq);
    fire(c.cq);
    assertEquals(2, a.drains, "a still served");
    assertEquals(2, c.drains, "c still served");
    assertNull(a.failedWith);
    assertNull(c.failedWith);
    // Throwing again (its flushed completions) changes nothing for the others.
    fire(b.cq);
    tick();
    assertEquals(3, a.drains);
    assertEquals(3, c.drains);
    assertEquals(3, b.failures);
  }

  @Test
  void anErrorOnTheTickFailsOnlyThatChannel() {
    b.checkThrows = new AssertionError("timeout check bug");
    a.finished = true;
    tick();
    assertSame(b.checkThrows, b.failedWith);
    assertEquals(1, a.tearDowns, "the tick went on to the other channels");
    assertEquals(1, c.timeoutChecks);
    assertEquals(2, loop.served());
  }

  @Test
  void aFailingWaitDrainsEverythingAndPauses() {
    events.next.add(new IOException("ibv_get_cq_event failed (errno 5)"));
    loop.runOnce();
    assertEquals(1, events.pauses, "a broken channel must not make the loop spin");
    assertEquals(2, a.drains);
    assertEquals(2, b.drains);
    assertEquals(2, c.drains);
    fire(a.cq);
    assertEquals(3, a.drains, "serving on after the failed wait");
    assertEquals(1, events.pauses);
  }

  @Test
  void anEventOfAnUnknownCqDrainsEverything() {
    fire(CompletionLoop.UNKNOWN_CQ);
    assertEquals(6, loop.rearms());
    assertEquals(0, loop.unmatchedEvents());
    fire(0x4000009000009L); // a CQ no channel here owns
    assertEquals(9, loop.rearms());
    assertEquals(1, loop.unmatchedEvents());
    assertEquals(0, events.pauses);
  }

  @Test
  void aFinishedChannelIsTornDownOnceAndNeverDrainedAgain() {
    b.finished = true;
    tick();
    assertEquals(1, b.tearDowns);
    assertEquals(2, loop.served());
    int drains = b.drains;
    fire(b.cq); // fired before its teardown
    tick();
    assertEquals(drains, b.drains);
    assertEquals(1, b.tearDowns);
    assertEquals(1, loop.unmatchedEvents());
    assertFalse(a.finished);
  }

  @Test
  void drainedCompletionsAreHandedOverAfterEachPass() {
    int before = flushes;
    fire(a.cq);
    assertEquals(before + 1, flushes);
    b.drainThrows = new IllegalStateException("bug");
    fire(b.cq);
    assertEquals(before + 2, flushes, "what was collected before the throw still goes out");
    assertTrue(loop.served() == 3);
  }
}
