/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs read callbacks, so completion threads only poll: up to {@link #threads} named daemon
 * threads. Its queue holds completed reads whose callbacks have not run yet; each holds its
 * receive-pool memory (successes) or its slot was already released (failures), so the pool
 * and the reads in flight bound it.
 *
 * <p>Built to wake as few threads as it can (issue 28): a park and its unpark cost
 * microseconds of CPU on both sides on a VM, more than a batch of callbacks. So
 * <ul>
 * <li>a thread takes task after task until the queue is empty, and then one of them (the
 *     others park at once) looks for work for {@link #SPIN_NANOS} before it parks, which
 *     covers the gaps between a drain's batches and between a task's fetches;</li>
 * <li>{@link #dispatch} wakes a thread only when no thread is awake without a callback
 *     ("scanning"), and a woken thread counts as scanning from the moment it is chosen;</li>
 * <li>a thread that takes a task and leaves more queued with no thread scanning wakes
 *     another first, so a queued task never waits behind a running one while a thread is
 *     free (a slow listener delays only its own batch, as with a thread pool).</li>
 * </ul>
 * The completion thread still runs no callback, whatever the callbacks do.
 */
final class CallbackDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(CallbackDispatcher.class);

  /** How long the last awake thread looks for work before it parks. */
  static final long SPIN_NANOS = 50_000L;
  /** An idle thread ends after this long (a thread pool's keep-alive). */
  private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final String prefix;
  private final int maxThreads;
  private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
  /** Threads awake and not in a callback, or chosen to wake: they will look at the queue. */
  private final AtomicInteger scanning = new AtomicInteger();
  private final AtomicLong dispatched = new AtomicLong();
  private final AtomicLong wakeups = new AtomicLong();
  private final AtomicInteger names = new AtomicInteger();
  private final Object lock = new Object();
  /** Parked threads, the most recent last (guarded by lock). */
  private final ArrayDeque<Worker> idle = new ArrayDeque<>();
  /** Threads started and not ended (guarded by lock). */
  private int live;
  private volatile boolean shutdown;

  CallbackDispatcher(int cores, String prefix) {
    this.prefix = prefix;
    this.maxThreads = threads(cores);
  }

  /** Threads running read callbacks: the executor's cores, at least 2, at most 8. */
  static int threads(int cores) {
    return Math.max(2, Math.min(8, cores));
  }

  /**
   * Runs a read callback off the completion thread. After shutdown the caller runs it (only
   * failure callbacks of reads the close ended remain then). Each callback runs exactly once.
   */
  void dispatch(Runnable callback) {
    if (shutdown) {
      callback.run();
      return;
    }
    dispatched.incrementAndGet();
    queue.offer(callback);
    if (shutdown) {
      // The threads may have seen the queue empty after the shutdown and ended: whoever
      // takes it out of the queue runs it, the caller or a thread still draining.
      if (queue.remove(callback)) {
        callback.run();
      }
      return;
    }
    if (scanning.get() == 0) {
      signalWork();
    }
  }

  /** Wakes a parked thread, or starts one, and counts it as scanning; none when all run. */
  private void signalWork() {
    Worker w;
    boolean fresh = false;
    synchronized (lock) {
      w = idle.pollLast();
      if (w != null) {
        w.signalled = true;
      } else if (live < maxThreads && !shutdown) {
        live++;
        fresh = true;
        w = new Worker(prefix + names.getAndIncrement());
      } else {
        return; // every thread runs a callback: one takes the task when done
      }
      scanning.incrementAndGet();
    }
    wakeups.incrementAndGet();
    if (fresh) {
      try {
        w.thread.start();
      } catch (Throwable t) { // no thread to be had: the task stays queued for a running one
        synchronized (lock) {
          live--;
          scanning.decrementAndGet();
        }
        throw t;
      }
    } else {
      LockSupport.unpark(w.thread);
    }
  }

  /** Tasks handed to the threads so far (exact once they ran; for tests). */
  long tasksDispatched() {
    return dispatched.get();
  }

  /** Threads woken or started for a task so far (for tests and the cost benchmark). */
  long wakeups() {
    return wakeups.get();
  }

  /** Lets the queued callbacks finish (up to 10 s), then stops the threads. */
  void shutdown() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    synchronized (lock) {
      shutdown = true;
      // Wake the parked threads: they drain the queue and end.
      for (Worker w; (w = idle.pollLast()) != null; ) {
        w.signalled = true;
        scanning.incrementAndGet();
        LockSupport.unpark(w.thread);
      }
      try {
        long left;
        while (live > 0 && (left = deadline - System.nanoTime()) > 0) {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (live > 0) {
        LOG.warn("verbs transport close: read callbacks still running after 10 s");
      }
    }
  }

  private final class Worker implements Runnable {
    final Thread thread;
    volatile boolean signalled;

    Worker(String name) {
      this.thread = new Thread(this, name);
      this.thread.setDaemon(true);
    }

    /** Holds a scanning count at the top of the loop; gives it up while it runs a task. */
    @Override
    public void run() {
      try {
        while (true) {
          boolean closing = shutdown; // read before the poll: see dispatch
          Runnable task = queue.poll();
          if (task == null && !closing) {
            task = spin();
          }
          if (task == null) {
            if (closing) {
              scanning.decrementAndGet();
              return;
            }
            task = park();
            if (task == null) {
              if (signalled) {
                continue; // woken: scanning again
              }
              return; // idle too long: ended (counted out under the lock)
            }
          }
          scanning.decrementAndGet();
          if (scanning.get() == 0 && !queue.isEmpty()) {
            signalWork(); // more queued and no one else looking: never behind this one
          }
          runQuietly(task);
          scanning.incrementAndGet();
        }
      } finally {
        synchronized (lock) {
          idle.remove(this);
          live--;
          lock.notifyAll();
        }
      }
    }

    /** The only scanning thread looks for work a while before it parks. */
    private Runnable spin() {
      if (scanning.get() > 1) {
        return null;
      }
      long deadline = System.nanoTime() + SPIN_NANOS;
      do {
        Thread.onSpinWait();
        Runnable task = queue.poll();
        if (task != null) {
          return task;
        }
      } while (System.nanoTime() - deadline < 0);
      return null;
    }

    /**
     * Parks until signalled (true {@link #signalled}, scanning again: returns null), or
     * takes a task queued while it was going to park (scanning again: returns it). Null and
     * not signalled: it stayed idle {@link #KEEP_ALIVE_NANOS} and ends.
     */
    private Runnable park() {
      synchronized (lock) {
        signalled = false;
        idle.addLast(this);
      }
      scanning.decrementAndGet();
      // A dispatch that saw this thread scanning woke no one: look once more.
      Runnable task = queue.poll();
      if (task != null) {
        synchronized (lock) {
          if (idle.remove(this)) {
            scanning.incrementAndGet(); // else a signal already counted it
          }
        }
        return task;
      }
      long deadline = System.nanoTime() + KEEP_ALIVE_NANOS;
      while (!signalled) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          synchronized (lock) {
            if (idle.remove(this)) {
              return null; // the finally counts it out
            }
          }
          continue; // signalled meanwhile
        }
        LockSupport.parkNanos(this, left);
      }
      return null;
    }

    private void runQuietly(Runnable task) {
      try {
        task.run();
      } catch (Throwable t) {
        // Batches catch their callbacks' exceptions: this is a bug, not a reason to lose
        // the thread (a thread pool would replace it).
        LOG.error("read callback task threw", t);
      }
    }
  }
}
