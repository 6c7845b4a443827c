/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RareLog;
import org.apache.spark.shuffle.rdma.transport.ReadRefusedException;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.CompletionLoop;
import org.apache.spark.shuffle.rdma.transport.verbs.PoolWait;
import org.apache.spark.shuffle.rdma.transport.verbs.PooledManagedBuffer;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadRecovery;
import org.apache.spark.shuffle.rdma.transport.verbs.SlotTable;
import org.apache.spark.shuffle.rdma.transport.verbs.WcStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reads on one RC connection (one queue pair) to one peer, shared by every task of the
 * executor; with spark.shuffle.rdma.verbs.queuePairsPerPeer above 1 it is one lane of a
 * {@link StripedChannel}. Its job is the life of each read: queue, post, complete, retry or
 * fail. The {@link VerbsConnector} creates it and its QP, its {@link OutboundConnection}
 * activates it when the handshake is done, its {@link CompletionAgent} drains its CQ when
 * it fired.
 *
 * <p>Reads queue here and are posted as chains of RDMA READ work requests (one
 * ibv_post_send, one doorbell per chain, by its {@link ReadChainPoster}) while a slot and
 * receive-pool memory are free; the slot number is the work request id. The slot table holds the READ depth negotiated in the
 * RDMA-CM handshake ({@link org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth}, at
 * most the send queue), so no more READs than that are ever outstanding on the QP; the
 * others wait here and are posted as completions free slots. Posting reuses pre-built
 * SVCPostSend objects (one per chain length), so the hot path allocates nothing in DiSNI.
 * Completions arrive on the owning {@link CompletionAgent}, which only polls: each
 * completed read's callback runs on the {@link CallbackDispatcher} (a drain's reads go
 * there in batches, {@link CallbackBatcher}), and its receive-pool memory returns to the
 * pool after the callback.
 *
 * <p>Failures are isolated per read ({@link ReadRecovery}): a completion with its own error
 * fails that read only. The QP is then in error and the device flushes every other posted
 * read; this channel stops, a fresh connection to the same peer (the same lane) is started
 * at once (counted
 * in {@code transport.reconnects}), and the flushed reads plus the ones still waiting are
 * posted there once, as are reads handed to this channel afterwards. A read flushed on that
 * second connection too fails. A channel that breaks without a read's error (timeout,
 * disconnect, failed post, close) fails its reads. Other peers' channels have their own QP
 * and CQ and are not affected.
 *
 * <p>A read that finds no pool memory waits for it at most spark.shuffle.rdma.verbs.poolWait
 * ({@link PoolWait}); then it lands in memory of its own ({@link OverflowLanding}), so fetched
 * blocks a task holds unconsumed can slow reads down but never stall them.
 */
final class VerbsChannel implements TransportChannel, CqPoller.Sink, CompletionLoop.Served {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsChannel.class);
  private static final int MAX_CHAIN = ReadChainPoster.MAX_CHAIN;
  /** After a failure, how long flushed completions may take before forced teardown. */
  private static final long FLUSH_GRACE_NANOS = 5_000_000_000L;

  private enum State { CONNECTING, ACTIVE, FAILED, DESTROYED }

  private final VerbsConnector connector;
  private final PeerAddress peer;
  /** Which of the peer's queue pairs this is (0 .. queuePairsPerPeer - 1). */
  final int lane;
  final RdmaCmId id;
  final CompletionAgent agent;
  private final CompletableFuture<VerbsChannel> established;
  private final ReceivePool pool;
  private final TransportStats stats;
  private final long readTimeoutNanos;
  private final int maxReadLength;
  private int depth;
  /**
   * Reads waiting or posted, written under the lock after each pump, read without it by the
   * striping choice; Integer.MAX_VALUE once the channel takes no reads.
   */
  private volatile int load;
  private final AtomicBoolean destroying = new AtomicBoolean();

  // Guarded by this.
  private State state = State.CONNECTING;
  private IOException failure;
  private long failedAt;
  private SlotTable slots;
  private final ArrayDeque<ReadRequest> waiting = new ArrayDeque<>();
  private final ReadRecovery<ReadRequest> recovery = new ReadRecovery<>();
  /** Set when a read's error broke this channel: where its reads go next. */
  private CompletableFuture<VerbsChannel> successor;
  private final int[] chain = new int[MAX_CHAIN];
  private ReadChainPoster poster;
  /** Per slot: the read's own memory when it landed outside the pool, else null. */
  private OverflowLanding[] outside;
  private final PoolWait poolWait;

  // Set on the CM thread before the channel is published, then read-only.
  IbvCQ cq;
  IbvQP qp;

  // Completion agent thread only (the poller is built on the CM thread before the hand-over).
  private final List<ReadRequest> toRetry = new ArrayList<>();
  private CqPoller poller;
  /** The CQ's native handle: what CqEvents names when this CQ fired. */
  private long cqHandle;

  VerbsChannel(VerbsConnector connector, PeerAddress peer, int lane, RdmaCmId id,
      CompletionAgent agent, CompletableFuture<VerbsChannel> established, int depth) {
    this.connector = connector;
    this.peer = peer;
    this.lane = lane;
    this.id = id;
    this.agent = agent;
    this.established = established;
    this.pool = connector.pool();
    this.stats = connector.stats();
    this.readTimeoutNanos = connector.conf().readTimeoutMs() * 1_000_000L;
    this.maxReadLength = connector.maxReadLength();
    this.depth = depth;
    this.poolWait = new PoolWait(connector.conf().verbsPoolWaitMs() * 1_000_000L);
  }

  @Override
  public PeerAddress peer() {
    return peer;
  }

  /**
   * A quarter of the receive pool (a power of two, so the buddy allocator wastes nothing),
   * at most spark.shuffle.rdma.maxReadSize: several pieces of one large block are in flight
   * at once and other reads still find memory.
   */
  @Override
  public int maxReadLength() {
    return maxReadLength;
  }

  @Override
  public synchronized boolean isActive() {
    return state == State.ACTIVE;
  }

  /** True for the one caller that may tear this channel down. */
  boolean markDestroying() {
    return destroying.compareAndSet(false, true);
  }

  /** Sizes the send queue; called before the QP is created. */
  int depth() {
    return depth;
  }

  void setDepth(int depth) {
    this.depth = depth;
  }

  /** Reads waiting or posted here, for the striping choice; MAX_VALUE once failed. */
  int load() {
    return load;
  }

  /**
   * CM thread, on ESTABLISHED: start taking reads, at most {@code negotiatedReadDepth}
   * posted, and hand the CQ to its completion agent.
   */
  void activate(int negotiatedReadDepth) throws IOException {
    synchronized (this) {
      if (state != State.CONNECTING) {
        return;
      }
      slots = new SlotTable(ReadDepth.window(depth, negotiatedReadDepth));
      outside = new OverflowLanding[slots.capacity()];
      poster = new ReadChainPoster(qp, pool);
      state = State.ACTIVE;
    }
    poller = new CqPoller(cq);
    cqHandle = ((NatObject) cq).getObjId();
    agent.add(this);
    established.complete(this);
  }

  // ---- reading ----

  @Override
  public void read(List<ReadRequest> batch) {
    stats.readsPosted.addAndGet(batch.size());
    stats.batchesPosted.incrementAndGet();
    enqueue(batch, false);
  }

  /**
   * Queues reads for posting; when this channel already broke because of a read's error they
   * go to its successor instead. {@code asRetries}: they were flushed (or waiting) on a
   * broken predecessor, so this is their last connection.
   */
  private void enqueue(List<ReadRequest> batch, boolean asRetries) {
    List<ReadRequest> rejected = null;
    List<ReadRequest> forward = null;
    IOException why = null;
    CompletableFuture<VerbsChannel> next;
    synchronized (this) {
      next = successor;
      for (ReadRequest r : batch) {
        if (state == State.ACTIVE) {
          if (asRetries) {
            recovery.markRetry(r);
          }
          waiting.add(r);
        } else if (next != null && !asRetries) {
          if (forward == null) {
            forward = new ArrayList<>();
          }
          forward.add(r);
        } else {
          if (rejected == null) {
            rejected = new ArrayList<>();
          }
          rejected.add(r);
          why = failure != null ? failure : new IOException("RDMA channel to " + peer
              + " is not connected");
        }
      }
    }
    if (rejected != null) {
      for (ReadRequest r : rejected) {
        failRead(r, why);
      }
    }
    if (forward != null) {
      forwardTo(next, forward, false);
    }
    pump();
  }

  /** Hands reads to the connection that replaces this one, once it is up. */
  private void forwardTo(CompletableFuture<VerbsChannel> next, List<ReadRequest> reads,
      boolean asRetries) {
    if (next == null) {
      // The channel failed for another reason (close, disconnect) before its replacement
      // was started: nothing to retry on.
      IOException cause;
      synchronized (this) {
        cause = failure;
      }
      for (ReadRequest r : reads) {
        failRead(r, cause);
      }
      return;
    }
    if (asRetries) {
      stats.readsRetried.addAndGet(reads.size());
    }
    next.whenComplete((ch, err) -> {
      if (err != null) {
        IOException cause = new IOException("RDMA READ to " + peer + " could not be posted "
            + "again after its connection failed: reconnecting failed: " + err.getMessage(), err);
        for (ReadRequest r : reads) {
          failRead(r, cause);
        }
      } else {
        ch.enqueue(reads, asRetries);
      }
    });
  }

  /**
   * Posts waiting reads while slots and pool memory allow. Called after read(), after
   * completions freed slots, and by the pool when memory came back.
   */
  void pump() {
    List<ReadRequest> tooLarge = null;
    List<ReadRequest> unlanded = null;
    IOException unlandedWhy = null;
    synchronized (this) {
      int n = 0;
      long now = System.nanoTime();
      while (state == State.ACTIVE && !waiting.isEmpty() && slots.hasFree()) {
        ReadRequest r = waiting.peek();
        if (!pool.fits(r.length())) {
          waiting.poll();
          if (tooLarge == null) {
            tooLarge = new ArrayList<>();
          }
          tooLarge.add(r);
          continue;
        }
        long off = pool.allocate(r.length(), this);
        OverflowLanding own = null;
        if (off >= 0 || pool.memoryComing()) {
          // Memory is free, or reads on the wire will free some: a busy pool, not a held one.
          poolWait.memoryFound();
          if (off < 0) {
            break; // the pool calls pump() again on release
          }
        } else if (!poolWait.givesUp(now)) {
          break; // all of it held by unconsumed blocks: the agent's tick pumps again
        } else {
          try {
            own = pool.overflow(r.length());
          } catch (IOException | RuntimeException e) {
            waiting.poll();
            if (unlanded == null) {
              unlanded = new ArrayList<>();
            }
            unlanded.add(r);
            unlandedWhy = new IOException("RDMA READ from " + peer + " found no receive-pool "
                + "memory within " + RdmaConf.VERBS_POOL_WAIT().key() + " and registering "
                + r.length() + " bytes of its own failed (" + e.getMessage() + "); raise "
                + RdmaConf.VERBS_RECEIVE_POOL_SIZE().key() + " or the memlock limit", e);
            continue;
          }
          long count = stats.poolOverflows.incrementAndGet();
          stats.poolOverflowBytes.addAndGet(r.length());
          if (RareLog.due(count)) {
            LOG.warn("verbs: a read waited {} ms for receive-pool memory and lands outside the "
                + "pool ({} such reads so far): fetched blocks not yet consumed hold the pool "
                + "({} {} bytes, several fetch iterators open per task or tasks per executor); "
                + "see transport.poolOverflows", connector.conf().verbsPoolWaitMs(), count,
                RdmaConf.VERBS_RECEIVE_POOL_SIZE().key(), pool.capacity());
          }
        }
        waiting.poll();
        int slot = slots.take(r, off, now);
        outside[slot] = own;
        chain[n++] = slot;
        if (n == MAX_CHAIN) {
          post(n);
          n = 0;
        }
      }
      if (n > 0) {
        post(n);
      }
      if (state == State.ACTIVE) {
        load = waiting.size() + slots.inFlight();
      }
    }
    if (unlanded != null) {
      for (ReadRequest r : unlanded) {
        failRead(r, unlandedWhy);
      }
    }
    if (tooLarge != null) {
      for (ReadRequest r : tooLarge) {
        failRead(r, new IOException("read of " + r.length() + " bytes is larger than the "
            + "verbs receive pool (" + pool.capacity() + " bytes); raise "
            + "spark.shuffle.rdma.verbs.receivePoolSize"));
      }
    }
  }

  /** Posts the first {@code n} slots of the chain with one doorbell. */
  private void post(int n) {
    try {
      poster.post(chain, n, slots, outside);
    } catch (IOException | RuntimeException e) {
      // The reads stay in their slots: flushed completions (or forced teardown) fail them.
      failLocked(new IOException("posting RDMA READs to " + peer + " failed: " + e.getMessage(),
          e));
    }
  }

  // ---- completions, on the completion agent's thread ----

  @Override
  public long cq() {
    return cqHandle;
  }

  /**
   * Drains and re-arms the CQ, then re-posts flushed reads and posts waiting ones. Completed
   * reads collect in the agent's {@link CallbackBatcher}; the agent hands them over after.
   */
  @Override
  public void drain() {
    if (poller == null) {
      return;
    }
    try {
      poller.drain(this);
    } catch (IOException e) {
      fail(new IOException("polling completions of " + peer + " failed: " + e.getMessage(), e));
    }
    retryFlushed();
    pump();
  }

  /**
   * The agent caught {@code why} from this channel (a bug in completion handling): fail it
   * as any broken connection, so its reads fail or are retried and the agent serves on.
   */
  @Override
  public void failDraining(Throwable why) {
    fail(new IOException("handling completions of " + peer + " failed: " + why, why));
    retryFlushed(); // reads whose slots were already freed must not be lost with the drain
  }

  private void retryFlushed() {
    if (!toRetry.isEmpty()) {
      CompletableFuture<VerbsChannel> next;
      synchronized (this) {
        next = successor;
      }
      List<ReadRequest> reads = new ArrayList<>(toRetry);
      toRetry.clear();
      forwardTo(next, reads, true);
    }
  }

  /**
   * One work completion: decide (under the lock), then act outside it (callbacks through the
   * agent's {@link CallbackBatcher}: final deliveries at once, the rest on the callback threads).
   */
  @Override
  public void complete(IbvWC wc) {
    int slot = (int) wc.getWr_id();
    int status = wc.getStatus();
    ReadRequest r;
    long off;
    OverflowLanding own;
    IOException cause;
    ReadRecovery.Verdict verdict;
    boolean brokeByThisRead = false;
    boolean brokeUnnoticed = false;
    synchronized (this) {
      r = slots.request(slot);
      if (r == null) {
        return;
      }
      off = slots.offset(slot);
      own = outside[slot];
      outside[slot] = null;
      slots.release(slot);
      if (recovery.needsFailureBefore(status)) {
        brokeUnnoticed = true; // flushed while we thought the QP fine: it broke under us
        recovery.onConnectionFailure();
      }
      ReadRecovery.State before = recovery.state();
      verdict = recovery.onCompletion(r, status);
      brokeByThisRead = before == ReadRecovery.State.ACTIVE
          && recovery.state() == ReadRecovery.State.BROKEN_BY_READ_ERROR;
      cause = failure;
    }
    if (verdict == ReadRecovery.Verdict.DELIVER) {
      PooledManagedBuffer data = own != null ? own.buffer(r.length()) : pool.buffer(off, r.length());
      stats.readsCompleted.incrementAndGet();
      stats.bytesRead.addAndGet(r.length());
      agent.callbacks().success(r, data); // its memory returns after the callback
      return;
    }
    if (own != null) {
      own.release();
    } else {
      pool.free(off);
    }
    if (brokeUnnoticed) {
      fail(new IOException("RDMA connection to " + peer + " broke (posted reads were "
          + "flushed)"));
      synchronized (this) {
        cause = failure;
      }
    }
    if (verdict == ReadRecovery.Verdict.RETRY) {
      toRetry.add(r);
      return;
    }
    String why = "RDMA READ " + r + " from " + peer + " failed: " + WcStatus.describe(status);
    IOException e = WcStatus.isRefusal(status) ? new ReadRefusedException(why)
        : new IOException(why + (status == WcStatus.WR_FLUSH_ERR && cause != null
            ? "; cause: " + cause.getMessage() : ""),
            status == WcStatus.WR_FLUSH_ERR ? cause : null);
    if (brokeByThisRead) {
      failByReadError(e);
    }
    stats.readsFailed.incrementAndGet();
    agent.callbacks().failure(r, e);
  }

  /**
   * Agent tick: read timeouts, and a pump for reads waiting on pool memory (a held pool wakes
   * no one, so the wait is ended from here).
   */
  @Override
  public void checkTimeouts(long now) {
    long oldest;
    boolean hungry;
    synchronized (this) {
      if (state != State.ACTIVE) {
        return;
      }
      oldest = slots.oldestPostNanos();
      hungry = !waiting.isEmpty();
    }
    if (hungry) {
      pump();
    }
    if (oldest != Long.MAX_VALUE && now - oldest > readTimeoutNanos) {
      fail(new IOException("RDMA READ from " + peer + " did not complete within "
          + connector.conf().readTimeoutMs() + " ms (spark.shuffle.rdma.readTimeout)"));
    }
  }

  /** Agent thread, once {@link #readyForTeardown}: the CQ is never polled again. */
  @Override
  public void tearDown() {
    connector.destroy(this);
  }

  /** True once failed and every posted read completed, or the flush grace ran out. */
  @Override
  public synchronized boolean readyForTeardown(long now) {
    return state == State.FAILED
        && (slots == null || slots.inFlight() == 0 || now - failedAt > FLUSH_GRACE_NANOS);
  }

  // ---- failure and teardown ----

  /** Fails the channel: no new reads, waiting ones fail now, posted ones flush. */
  void fail(IOException cause) {
    List<ReadRequest> dropped;
    boolean wasConnecting;
    synchronized (this) {
      if (state == State.FAILED || state == State.DESTROYED) {
        return;
      }
      wasConnecting = state == State.CONNECTING;
      dropped = markFailedLocked(cause);
    }
    afterFailure(cause, dropped, wasConnecting);
  }

  private List<ReadRequest> markFailedLocked(IOException cause) {
    recovery.onConnectionFailure();
    state = State.FAILED;
    load = Integer.MAX_VALUE;
    failure = cause;
    failedAt = System.nanoTime();
    List<ReadRequest> dropped = new ArrayList<>(waiting);
    waiting.clear();
    return dropped;
  }

  /**
   * A read's own error broke the QP: stop posting, start the replacement connection now (so
   * it is being set up while the flushed completions drain), move the waiting reads to it,
   * and disconnect. The flushed reads follow from {@link #drain}.
   */
  private void failByReadError(IOException cause) {
    CompletableFuture<VerbsChannel> next = new CompletableFuture<>();
    List<ReadRequest> moved = new ArrayList<>();
    List<ReadRequest> failed = new ArrayList<>();
    synchronized (this) {
      if (state != State.ACTIVE) {
        return;
      }
      state = State.FAILED;
      load = Integer.MAX_VALUE;
      failure = cause;
      failedAt = System.nanoTime();
      successor = next;
      for (ReadRequest r : waiting) {
        (recovery.onDropped(r) == ReadRecovery.Verdict.RETRY ? moved : failed).add(r);
      }
      waiting.clear();
    }
    // Outside the lock: connecting takes the connector's lock, which is held while asking
    // channels whether they are active.
    stats.reconnects.incrementAndGet();
    connector.connectAsync(peer, lane).whenComplete((ch, err) -> {
      if (err != null) {
        next.completeExceptionally(err);
      } else {
        next.complete(ch);
      }
    });
    for (ReadRequest r : failed) {
      failRead(r, cause);
    }
    if (!moved.isEmpty()) {
      forwardTo(next, moved, true);
    }
    connector.disconnect(this);
  }

  private void afterFailure(IOException cause, List<ReadRequest> dropped, boolean wasConnecting) {
    for (ReadRequest r : dropped) {
      failRead(r, cause);
    }
    if (wasConnecting) {
      established.completeExceptionally(cause);
      connector.destroy(this);
    } else {
      connector.disconnect(this); // moves the QP to error: posted reads come back flushed
    }
  }

  /** From post(), lock held: stop posting now, run the callbacks on another thread. */
  private void failLocked(IOException cause) {
    if (state == State.ACTIVE) {
      List<ReadRequest> dropped = markFailedLocked(cause);
      connector.runLater(() -> afterFailure(cause, dropped, false));
    }
  }

  /**
   * After the QP is destroyed (the device no longer writes into the pool), fails the reads
   * that never completed and returns their memory.
   */
  void failRemaining() {
    List<ReadRequest> left = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    List<OverflowLanding> owns = new ArrayList<>();
    IOException cause;
    synchronized (this) {
      state = State.DESTROYED;
      cause = failure != null ? failure : new IOException("RDMA channel to " + peer + " closed");
      if (slots != null) {
        for (int s = 0; s < slots.capacity(); s++) {
          ReadRequest r = slots.request(s);
          if (r != null) {
            recovery.onAbandoned(r);
            left.add(r);
            if (outside[s] != null) {
              owns.add(outside[s]);
              outside[s] = null;
            } else {
              offsets.add(slots.offset(s));
            }
            slots.release(s);
          }
        }
      }
      left.addAll(waiting);
      waiting.clear();
    }
    for (long off : offsets) {
      pool.free(off);
    }
    for (OverflowLanding o : owns) {
      o.release();
    }
    for (ReadRequest r : left) {
      failRead(r, cause);
    }
    if (poster != null) {
      poster.free();
    }
    if (poller != null) {
      poller.free();
    }
  }

  /** Fails one read; its callback runs on the callback executor, never on the poller. */
  private void failRead(ReadRequest r, Throwable cause) {
    stats.readsFailed.incrementAndGet();
    connector.callbacks().dispatch(() -> {
      try {
        r.callback().onFailure(r, cause);
      } catch (RuntimeException ignored) {
        // a callback's own failure must not stop the executor thread
      }
    });
  }

  @Override
  public String toString() {
    return "verbs channel to " + peer + (lane > 0 ? " (queue pair " + lane + ")" : "");
  }
}
