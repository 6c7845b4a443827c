/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.transport.verbs.CompletionLoop;

/**
 * A completion channel's events, naming the CQ that fired (native/cq_events.c): DiSNI 2.1's
 * {@code IbvCompChannel.getCqEvent} only says that one of the channel's CQs did, so its
 * {@link CompletionAgent} would have to drain and re-arm every CQ it serves. Our createCQ
 * makes each CQ's handle ({@code NatIbvCQ.getObjId()}) its cq_context, which the event
 * carries; the event is acknowledged in the native call.
 */
final class CqEvents implements CompletionLoop.Events {
  static {
    // The isolated loader has loaded it already (NativeIdentity); this binds it to us too.
    System.loadLibrary("disni");
  }

  private final long channel;

  CqEvents(IbvCompChannel channel) {
    this.channel = ((NatObject) channel).getObjId();
  }

  /**
   * Waits up to {@code timeoutMs} (negative: forever) for one event of the completion channel
   * {@code channel} (a DiSNI handle) and acknowledges it. Returns the fired CQ's handle; 0
   * when none fired in time; -ENOENT for an event of a CQ without a live handle; another
   * -errno when reading the event failed. A bad channel handle throws.
   */
  static native long waitCqEvent(long channel, int timeoutMs) throws IOException;

  private static final long ENOENT = 2;

  @Override
  public long await(int timeoutMs) throws IOException {
    long r = waitCqEvent(channel, timeoutMs);
    if (r >= 0) {
      return r;
    }
    if (r == -ENOENT) {
      return CompletionLoop.UNKNOWN_CQ;
    }
    throw new IOException("ibv_get_cq_event failed (errno " + -r + ")");
  }
}
