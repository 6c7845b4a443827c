/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import org.apache.spark.shuffle.rdma.transport.ReadRequest;

/**
 * Spare {@link ReadRequest}s for the READs of one-READ blocks (issue 28: a block costs no
 * request object in steady state). Ownership is explicit: a fetch takes a request when it
 * posts the READ, the channel holds it until it calls the READ's callback (once), and the
 * callback gives it back as its last act. Bounded: past {@link #CAPACITY} spares a request
 * given back is dropped; an empty pool makes a new one.
 */
final class RequestPool {
  /** Spares kept: the one-READ blocks one executor's reducers have in flight, at most. */
  static final int CAPACITY = 4096;

  private final ReadRequest[] spares;
  private int count; // guarded by this

  RequestPool() {
    this(CAPACITY);
  }

  RequestPool(int capacity) {
    this.spares = new ReadRequest[capacity];
  }

  /** A request to {@link ReadRequest#reset}: a spare, or a new one. */
  ReadRequest take() {
    synchronized (this) {
      if (count > 0) {
        ReadRequest r = spares[--count];
        spares[count] = null;
        return r;
      }
    }
    return new ReadRequest();
  }

  /** A request whose callback ran; the caller must not touch it afterwards. */
  void give(ReadRequest r) {
    r.clear();
    synchronized (this) {
      if (count < spares.length) {
        spares[count++] = r;
      }
    }
  }

  /** Spares held now (for tests). */
  synchronized int spares() {
    return count;
  }

  /** The pool of fetches built without one (tests, the client-cost benchmark's harness). */
  static RequestPool shared() {
    return Shared.POOL;
  }

  private static final class Shared {
    static final RequestPool POOL = new RequestPool();
  }
}
