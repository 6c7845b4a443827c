/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the few threads that serve completions for all connections, with one duty:
 * polling. It owns a completion channel shared by the CQs of the channels assigned to it,
 * sleeps on it, and on every wake-up (or tick) drains each of its CQs and re-arms them; on
 * the tick it also checks read timeouts and lets go of failed channels whose reads all came
 * back (only then may their CQ be destroyed: it is never polled again). A fixed number of
 * these exists per transport, however many peers there are. It runs no callback (completed
 * reads go to the {@link CallbackDispatcher}) and creates or destroys no connection (the
 * {@link VerbsConnector} does).
 */
final class CompletionAgent implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionAgent.class);
  private static final int WAIT_MS = 50;
  private static final long TICK_NANOS = 200_000_000L;

  private final IbvCompChannel compChannel;
  private final List<VerbsChannel> channels = new ArrayList<>(); // agent thread only
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Thread thread;
  private volatile boolean running = true;

  CompletionAgent(IbvContext context, String name) throws IOException {
    this.compChannel = context.createCompChannel();
    this.thread = new Thread(this, name);
    this.thread.setDaemon(true);
  }

  IbvCompChannel compChannel() {
    return compChannel;
  }

  void start() {
    thread.start();
  }

  /** Starts serving {@code ch}'s CQ (it is armed and drained at once). */
  void add(VerbsChannel ch) {
    tasks.add(() -> {
      channels.add(ch);
      ch.drainCompletions();
    });
  }

  @Override
  public void run() {
    long nextTick = System.nanoTime() + TICK_NANOS;
    while (running) {
      Runnable task;
      while ((task = tasks.poll()) != null) {
        task.run();
      }
      try {
        compChannel.getCqEvent(null, WAIT_MS);
      } catch (IOException e) {
        if (running) {
          LOG.error("completion channel failed", e);
        }
        return;
      }
      for (int i = 0; i < channels.size(); i++) {
        channels.get(i).drainCompletions();
      }
      long now = System.nanoTime();
      if (now - nextTick >= 0) {
        nextTick = now + TICK_NANOS;
        tick(now);
      }
    }
  }

  /** Read timeouts, and handing finished channels over for teardown. */
  private void tick(long now) {
    for (int i = channels.size() - 1; i >= 0; i--) {
      VerbsChannel ch = channels.get(i);
      ch.checkTimeouts(now);
      if (ch.readyForTeardown(now)) {
        channels.remove(i); // never polled again: its CQ may now be destroyed
        ch.tearDown();
      }
    }
  }

  /**
   * Stops the thread and waits up to 10 s for it. True once it ended: only then may the
   * caller destroy the CQs it polls and this completion channel.
   */
  boolean stop() throws InterruptedException {
    running = false;
    thread.join(10_000);
    return !thread.isAlive();
  }

  void destroy() {
    try {
      compChannel.destroyCompChannel();
    } catch (IOException e) {
      LOG.warn("destroying completion channel failed", e);
    }
  }
}
