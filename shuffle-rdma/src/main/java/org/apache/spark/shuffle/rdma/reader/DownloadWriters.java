/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads that write blocks fetched to disk (over spark.network.maxRemoteBlockSizeFetchToMem)
 * into Spark's download files, so that a slow disk never runs on, and stalls, the transport's
 * shared callback threads (issue 25). Bounded: at most {@link #THREADS} threads, started on
 * demand and gone after {@link #IDLE_SECONDS} idle. Each file is one task at a time
 * ({@code BlockFetch.Download}), so the queue holds at most one entry per block streaming to
 * disk, and each block holds at most {@code BlockFetch.DISK_WINDOW} pieces.
 */
final class DownloadWriters {
  /** Files written at once: a few disks' worth; more would only queue in the kernel. */
  static final int THREADS = 4;
  static final int IDLE_SECONDS = 30;

  private DownloadWriters() {}

  /** A pool of its own (RdmaBlockStoreClient's, shut down when the client closes). */
  static ExecutorService create() {
    ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, IDLE_SECONDS,
        TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "rdma-shuffle-download-writer");
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** The pool of fetches built without one (tests, the client-cost benchmark's harness). */
  static ExecutorService shared() {
    return Shared.POOL;
  }

  private static final class Shared {
    static final ExecutorService POOL = create();
  }
}
