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
  /**
   * Transport retries of every connection: 6, not the maximum 7, because Soft-RoCE (rdma_rxe)
   * takes 7 to mean "retry for ever" (only the RNR count has that meaning in the IB spec), so a
   * queue pair to an unreachable peer would never fail and only readTimeout would end its
   * reads. With 6 a dead link surfaces as IBV_WC_RETRY_EXC_ERR after 7 local ACK timeouts
   * (about 4 s under rxe's defaults), which the reader retries (FetchRetryPolicy).
   */
  static final int TRANSPORT_RETRY = 6;
  /** RNR retries (7: for ever, per the spec); READs never meet a receive-not-ready. */
  static final int RNR_RETRY = 7;

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
