/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostSend;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.verbs.SlotTable;

/**
 * Rings one queue pair's doorbell: posts a chain of up to {@link #MAX_CHAIN} RDMA READ work
 * requests with one ibv_post_send. One pre-built, stateful SVCPostSend per chain length is
 * kept and only its fields are rewritten, so posting allocates nothing in DiSNI. Not thread
 * safe: its channel calls it under its own lock.
 */
final class ReadChainPoster {
  /** Longest chain posted with one doorbell. */
  static final int MAX_CHAIN = 16;

  private final IbvQP qp;
  private final ReceivePool pool;
  private final SVCPostSend[] posts = new SVCPostSend[MAX_CHAIN + 1];

  ReadChainPoster(IbvQP qp, ReceivePool pool) {
    this.qp = qp;
    this.pool = pool;
  }

  /**
   * Posts the reads in {@code chain[0..n)}: slot numbers of {@code slots}, each the work
   * request id, each READ landing at its slot's offset in the receive pool, or in the slot's
   * own memory when {@code outside[slot]} is set.
   */
  void post(int[] chain, int n, SlotTable slots, OverflowLanding[] outside) throws IOException {
    SVCPostSend svc = posts[n];
    if (svc == null) {
      svc = build(n);
      posts[n] = svc;
    }
    for (int i = 0; i < n; i++) {
      int slot = chain[i];
      ReadRequest r = slots.request(slot);
      SVCPostSend.SendWRMod wr = svc.getWrMod(i);
      wr.setWr_id(slot);
      wr.getRdmaMod().setRemote_addr(r.remoteAddress());
      wr.getRdmaMod().setRkey(r.key());
      SVCPostSend.SgeMod sge = wr.getSgeMod(0);
      OverflowLanding own = outside[slot];
      if (own == null) {
        sge.setAddr(pool.address() + slots.offset(slot));
        sge.setLkey(pool.lkey());
      } else {
        sge.setAddr(own.address());
        sge.setLkey(own.lkey());
      }
      sge.setLength(r.length());
    }
    svc.execute();
  }

  private SVCPostSend build(int n) throws IOException {
    List<IbvSendWR> wrs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      IbvSge sge = new IbvSge();
      sge.setLkey(pool.lkey());
      LinkedList<IbvSge> sges = new LinkedList<>();
      sges.add(sge);
      IbvSendWR wr = new IbvSendWR();
      wr.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
      wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
      wr.setSg_list(sges);
      wr.setNum_sge(1);
      wrs.add(wr);
    }
    return qp.postSend(wrs, null);
  }

  /** Frees the native memory of the pre-built requests (after the QP is destroyed). */
  void free() {
    for (SVCPostSend p : posts) {
      if (p != null) {
        p.free();
      }
    }
  }
}
