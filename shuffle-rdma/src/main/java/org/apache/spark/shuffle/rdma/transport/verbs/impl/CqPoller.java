/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;

/**
 * Drains one completion queue on its {@link CompletionAgent}'s thread: pre-built, stateful
 * poll and re-arm calls over a fixed array of work completions, so draining allocates
 * nothing. Owned by that thread alone.
 */
final class CqPoller {
  private static final int POLL_BATCH = 32;

  /** Receives each work completion; the entry is reused after the call returns. */
  interface Sink {
    void complete(IbvWC wc);
  }

  private final IbvWC[] wcs = new IbvWC[POLL_BATCH];
  private final SVCPollCq poll;
  private final SVCReqNotify arm;

  CqPoller(IbvCQ cq) throws IOException {
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new IbvWC();
    }
    poll = cq.poll(wcs, wcs.length);
    arm = cq.reqNotification(false);
  }

  /** Drains the CQ, re-arms it, and drains again (closing the arm/poll race). */
  void drain(Sink sink) throws IOException {
    drainOnce(sink);
    arm.execute();
    drainOnce(sink);
  }

  private void drainOnce(Sink sink) throws IOException {
    int n;
    do {
      n = poll.execute().getPolls();
      for (int i = 0; i < n; i++) {
        sink.complete(wcs[i]);
      }
    } while (n == wcs.length);
  }

  void free() {
    poll.free();
  }
}
