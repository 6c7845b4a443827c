/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

/**
 * Names and meanings of ibv_wc_status values, for failure messages that say what happened
 * (the numbers are rdma-core's enum ibv_wc_status, which DiSNI mirrors by ordinal).
 */
public final class WcStatus {
  public static final int SUCCESS = 0;
  public static final int WR_FLUSH_ERR = 5;
  public static final int REM_ACCESS_ERR = 10;

  private static final String[] NAMES = {
    "IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR",
    "IBV_WC_REM_OP_ERR", "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR",
    "IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",
    "IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR",
  };

  private WcStatus() {}

  public static String name(int status) {
    return status >= 0 && status < NAMES.length ? NAMES[status] : "IBV_WC_STATUS_" + status;
  }

  /**
   * True for the statuses by which the peer's NIC refused the READ itself (a wrong or revoked
   * rkey, a range outside the region, a request it does not accept): posting it again gets
   * the same answer. Transport errors (retries exceeded, flushed, timeouts) are not refusals.
   */
  public static boolean isRefusal(int status) {
    return status == REM_ACCESS_ERR || status == 9 || status == 15;
  }

  /** Status name plus what it usually means for a READ. */
  public static String describe(int status) {
    switch (status) {
      case REM_ACCESS_ERR:
        return name(status) + " (the peer refused the read: wrong or revoked rkey, or "
            + "address/length outside the registered region)";
      case WR_FLUSH_ERR:
        return name(status) + " (flushed: the connection had already failed)";
      case 12:
        return name(status) + " (no answer from the peer after retries: link down, peer "
            + "gone, or lossy RoCE fabric without PFC/ECN)";
      case 9:
      case 15:
        return name(status) + " (the peer rejected the request: READ depth or length "
            + "beyond what it accepts)";
      default:
        return name(status);
    }
  }
}
