/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;

/** The one shape of queue pair this transport creates, on either side of a connection. */
final class RcQueuePairs {
  /** RC transport and RNR retry counts (the maximum, 7) for every connection. */
  static final int RETRY = 7;

  private RcQueuePairs() {
  }

  /** Reliable connected, one scatter-gather entry per request, nothing inline, one CQ. */
  static IbvQPInitAttr attr(IbvCQ cq, int sendDepth, int recvDepth) {
    IbvQPInitAttr attr = new IbvQPInitAttr();
    attr.cap().setMax_send_wr(sendDepth);
    attr.cap().setMax_recv_wr(recvDepth);
    attr.cap().setMax_send_sge(1);
    attr.cap().setMax_recv_sge(1);
    attr.cap().setMax_inline_data(0);
    attr.setQp_type(IbvQP.IBV_QPT_RC);
    attr.setSend_cq(cq);
    attr.setRecv_cq(cq);
    return attr;
  }
}
