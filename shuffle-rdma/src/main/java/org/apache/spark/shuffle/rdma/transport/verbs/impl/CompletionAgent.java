/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import org.apache.spark.shuffle.rdma.transport.verbs.CompletionLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the few threads that serve completions for all connections, with one duty:
 * polling. It owns a completion channel shared by the CQs of the channels assigned to it and
 * runs a {@link CompletionLoop} over it: sleep on the channel, drain and re-arm the CQ that
 * fired ({@link CqEvents} names it), and on a tick drain them all, check read timeouts and
 * let go of failed channels whose reads all came back (only then may their CQ be destroyed:
 * it is never polled again). A channel that throws is failed, not the thread: it ends only
 * on {@link #stop}. A fixed number of these exists per transport, however many peers there
 * are. The only callbacks it runs are the reader's final in-memory deliveries to Spark (the
 * rest of a drain's completed reads go to the {@link CallbackDispatcher} in batches,
 * {@link CallbackBatcher}), and it creates or destroys no connection (the
 * {@link VerbsConnector} does).
 */
final class CompletionAgent implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionAgent.class);

  private final IbvCompChannel compChannel;
  private final CallbackBatcher callbacks;
  private final CompletionLoop loop;
  private final Thread thread;
  private volatile boolean running = true;

  /** @param readsFailed counts reads whose success callback threw */
  CompletionAgent(IbvContext context, String name, CallbackDispatcher dispatcher,
      AtomicLong readsFailed) throws IOException {
    this.compChannel = context.createCompChannel();
    this.callbacks = new CallbackBatcher(dispatcher, readsFailed);
    this.loop = new CompletionLoop(new CqEvents(compChannel), callbacks::flush,
        System::nanoTime);
    this.thread = new Thread(this, name);
    this.thread.setDaemon(true);
  }

  IbvCompChannel compChannel() {
    return compChannel;
  }

  /** Where this agent's channels put completed reads while it drains them (its thread only). */
  CallbackBatcher callbacks() {
    return callbacks;
  }

  /** CQ drains so far, each re-arming one CQ. */
  long rearms() {
    return loop.rearms();
  }

  void start() {
    thread.start();
  }

  /** Starts serving {@code ch}'s CQ (it is armed and drained at once). */
  void add(VerbsChannel ch) {
    loop.add(ch);
  }

  @Override
  public void run() {
    while (running) {
      loop.runOnce(); // never throws
    }
  }

  /**
   * Stops the thread and waits up to 10 s for it. True once it ended: only then may the
   * caller destroy the CQs it polls and this completion channel.
   */
  boolean stop() throws InterruptedException {
    running = false;
    thread.join(10_000);
    // One line per thread and executor: in the Soft-RoCE runs drains stay near the events,
    // not events times CQs, and unmatched events stay near 0 (else events name no CQ).
    LOG.info("{}: {} CQ drains (each re-armed one CQ), {} events of CQs it no longer served",
        thread.getName(), loop.rearms(), loop.unmatchedEvents());
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
