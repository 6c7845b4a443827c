/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadRecovery;
import org.apache.spark.shuffle.rdma.transport.verbs.SlotTable;
import org.apache.spark.shuffle.rdma.transport.verbs.WcStatus;

/**
 * A channel for the reducer cost benchmark (issue 28) that completes each READ in process by
 * copying the bytes from a registered mapping into the real {@link ReceivePool} (what the NIC
 * does), so the reader's and the verbs layer's Java cost per READ can be measured with no NIC.
 * In this package because the pool, the {@link CallbackBatcher} and the
 * {@link CallbackDispatcher} are package-private.
 *
 * <p>Two modes:
 * <ul>
 * <li>{@code inline}: each read is copied and its callback runs at once on the caller's
 *     thread with a pooled buffer (released after the callback, as the verbs layer does):
 *     the reader's own cost plus the buffer it is handed, nothing of the channel.
 * <li>{@code verbs}: the per-READ Java work of {@link VerbsChannel}, driven by a scripted
 *     completion source: reads queue, take a slot of the real {@link SlotTable} and pool
 *     memory (pump), the "NIC" copies and scripts a successful completion per slot, and the
 *     completions are handled as {@link VerbsChannel#complete} does (slot released,
 *     {@link ReadRecovery} verdict, pooled buffer) by a completion thread of its own, as a
 *     {@link CompletionAgent} would: the posting thread wakes it once per post (the CQ event),
 *     it drains, posts the reads that waited for slots, and hands the completed reads over
 *     through the real {@link CallbackBatcher}, which runs the final in-memory deliveries on
 *     it and hands the rest in batches to the real {@link CallbackDispatcher}'s threads. Not
 *     run: the work-request chain's native post
 *     (ReadChainPoster writes ~10 fields of a pre-built native request and rings the
 *     doorbell; it needs libdisni and a queue pair) and the CQ poll itself.
 * </ul>
 * This class mirrors VerbsChannel's pump and complete in a few lines instead of running them:
 * VerbsChannel is built around a live queue pair and connector. Keep the two in step.
 */
public final class LoopbackVerbsChannel implements TransportChannel, AutoCloseable {
  /** Where a key's bytes are: the benchmark's registered mappings. */
  public interface Regions {
    /** The mapping registered under {@code key}; its position 0 is {@link #base}. */
    ByteBuffer region(int key);

    long base(int key);
  }

  private final PeerAddress peer = new PeerAddress("127.0.0.1", 1);
  private final Regions regions;
  private final ReceivePool pool;
  private final int maxReadLength;
  private final boolean verbs;
  // verbs mode
  private final SlotTable slots;
  private final ReadRecovery<ReadRequest> recovery = new ReadRecovery<>();
  private final ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
  private final int[] completed;
  private int completedCount;
  private final CallbackDispatcher dispatcher;
  private final CallbackBatcher batcher;
  private final AtomicLong readsFailed = new AtomicLong();
  /** The completion agent's thread (verbs mode) and whether a "CQ event" is pending for it. */
  private final Thread agent;
  private final AtomicBoolean event = new AtomicBoolean();
  private volatile boolean running = true;

  /**
   * @param poolBytes receive pool size: must hold every read of one fetch (the benchmark
   *     never waits for pool memory)
   * @param slotCount the READ window (slot table size) in verbs mode
   * @param verbs the verbs layer (slots, recovery, batched hand-off to callback threads);
   *     false: callbacks inline
   */
  public LoopbackVerbsChannel(Regions regions, long poolBytes, int maxReadLength,
      int slotCount, boolean verbs) {
    this.regions = regions;
    this.pool = new ReceivePool(poolBytes);
    this.maxReadLength = maxReadLength;
    this.verbs = verbs;
    this.slots = new SlotTable(slotCount);
    this.completed = new int[slotCount];
    this.dispatcher = verbs
        ? new CallbackDispatcher(Runtime.getRuntime().availableProcessors(), "bench-callback-")
        : null;
    this.batcher = verbs ? new CallbackBatcher(dispatcher, readsFailed) : null;
    if (verbs) {
      agent = new Thread(this::agentLoop, "bench-completions");
      agent.setDaemon(true);
      agent.start();
    } else {
      agent = null;
    }
  }

  /** Reads whose success callback threw (counted by the batcher; verbs mode). */
  public long callbackFailures() {
    return readsFailed.get();
  }

  @Override
  public PeerAddress peer() {
    return peer;
  }

  @Override
  public int maxReadLength() {
    return maxReadLength;
  }

  @Override
  public boolean isActive() {
    return true;
  }

  @Override
  public void read(List<ReadRequest> batch) {
    if (!verbs) {
      for (int i = 0; i < batch.size(); i++) {
        ReadRequest r = batch.get(i);
        long off = landOrThrow(r);
        PooledManagedBuffer data = pool.buffer(off, r.length());
        try {
          r.callback().onSuccess(r, data);
        } finally {
          data.release();
        }
      }
      return;
    }
    synchronized (this) {
      for (int i = 0; i < batch.size(); i++) {
        waiting.add(batch.get(i));
      }
    }
    // VerbsChannel.read -> pump (post); the NIC's completion raises a CQ event: the agent.
    if (pump()) {
      wakeAgent();
    }
  }

  private void wakeAgent() {
    if (!event.getAndSet(true)) {
      LockSupport.unpark(agent);
    }
  }

  /**
   * The completion agent: sleeps until an event, then drains, posts what waited for slots
   * (VerbsChannel.drain's pump) and hands over (CompletionLoop's flush), until nothing is left.
   */
  private void agentLoop() {
    while (running) {
      if (!event.getAndSet(false)) {
        LockSupport.park(this);
        continue;
      }
      do {
        drain();
      } while (pump());
      batcher.flush();
    }
  }

  /** Posts waiting reads while slots are free; true when something was posted. */
  private synchronized boolean pump() {
    long now = System.nanoTime();
    boolean posted = false;
    while (!waiting.isEmpty() && slots.hasFree()) {
      ReadRequest r = waiting.poll();
      long off = landOrThrow(r);
      int slot = slots.take(r, off, now);
      completed[completedCount++] = slot; // the scripted completion source: it succeeds
      posted = true;
    }
    return posted;
  }

  /**
   * The scripted completions, handled as VerbsChannel.complete does, on the agent's thread
   * (the batcher is that thread's).
   */
  private void drain() {
    while (true) {
      int slot;
      synchronized (this) {
        if (completedCount == 0) {
          break;
        }
        slot = completed[--completedCount];
      }
      complete(slot, WcStatus.SUCCESS);
    }
  }

  private void complete(int slot, int status) {
    ReadRequest r;
    long off;
    ReadRecovery.Verdict verdict;
    synchronized (this) {
      r = slots.request(slot);
      if (r == null) {
        return;
      }
      off = slots.offset(slot);
      slots.release(slot);
      if (recovery.needsFailureBefore(status)) {
        recovery.onConnectionFailure();
      }
      verdict = recovery.onCompletion(r, status);
    }
    if (verdict == ReadRecovery.Verdict.DELIVER) {
      batcher.success(r, pool.buffer(off, r.length()));
    } else {
      pool.free(off);
      batcher.failure(r, new IllegalStateException("scripted failure " + status));
    }
  }

  /** Allocates pool memory for the read and copies its bytes there: the NIC's part. */
  private long landOrThrow(ReadRequest r) {
    ByteBuffer src = regions.region(r.key());
    if (src == null) {
      throw new IllegalStateException("no region registered under key " + r.key());
    }
    long at = r.remoteAddress() - regions.base(r.key());
    if (at < 0 || at + r.length() > src.capacity()) {
      throw new IllegalStateException(r + " outside its region of " + src.capacity()
          + " bytes");
    }
    long off;
    try {
      // No waiter: a full pool would register it for a wake-up, which a null refuses.
      off = pool.allocate(r.length(), null);
    } catch (NullPointerException full) {
      off = -1;
    }
    if (off < 0) {
      throw new IllegalStateException("benchmark receive pool too small for " + r
          + ": blocks of a fetch not released?");
    }
    pool.arena().put((int) off, src, (int) at, r.length());
    return off;
  }

  @Override
  public void close() {
    if (agent != null) {
      running = false;
      LockSupport.unpark(agent);
      try {
        agent.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (dispatcher != null) {
      dispatcher.shutdown();
    }
  }
}
