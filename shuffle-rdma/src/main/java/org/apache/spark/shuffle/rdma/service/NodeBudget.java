/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's cap on the bytes of map outputs the service holds registered, across every
 * application (--max-registered-bytes), and each application's share of it (--app-share):
 * on verbs these bytes are pinned page cache, on tcp mapped files and open descriptors. A
 * hand-over past either is refused, naming which; the executor then registers the output
 * itself (one-sided, gone with the executor) or, past its own cap, Spark's block transfer
 * service serves it. Reservations are taken before registering, so concurrent hand-overs of
 * several applications cannot pass the cap together.
 */
final class NodeBudget {
  private final long max;
  private final long appMax;
  private final AtomicLong used = new AtomicLong();

  /**
   * @param max the node's cap in bytes; 0: none
   * @param appSharePercent what one application may hold, in percent of the cap (1 to 100)
   */
  NodeBudget(long max, int appSharePercent) {
    this.max = max;
    this.appMax = max == 0 ? 0 : Math.max(1, max / 100 * appSharePercent
        + max % 100 * appSharePercent / 100);
  }

  long max() {
    return max;
  }

  /** What one application may hold; 0: no cap. */
  long appMax() {
    return appMax;
  }

  long used() {
    return used.get();
  }

  /**
   * Takes {@code bytes} for an application that holds {@code appBytes} now.
   *
   * @return null when taken; else why not (nothing taken)
   */
  String reserve(long bytes, long appBytes) {
    if (max == 0) {
      used.addAndGet(bytes);
      return null;
    }
    if (appBytes + bytes > appMax) {
      return "the application holds " + appBytes + " bytes in this node service and this "
          + "output (" + bytes + " bytes) would pass its share, " + appMax + " bytes (--app-share "
          + "of --max-registered-bytes " + max + ")";
    }
    long now;
    do {
      now = used.get();
      if (now + bytes > max) {
        return "this node service holds " + now + " bytes and this output (" + bytes
            + " bytes) would pass its --max-registered-bytes " + max;
      }
    } while (!used.compareAndSet(now, now + bytes));
    return null;
  }

  /** Gives back (negative: takes more, a registration that came out larger) bytes. */
  void release(long bytes) {
    used.addAndGet(-bytes);
  }
}
