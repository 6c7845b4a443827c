/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Layout self-check. DiSNI's Java code writes ibv_send_wr/ibv_sge/ibv_recv_wr and reads
 * ibv_wc and sockaddr_in field by field at fixed positions, and takes only the struct sizes
 * and the two rdma offsets from the library. This test checks that
 *   1. what the library reports equals sizeof/offsetof from the rdma-core headers, and
 *   2. every field position DiSNI hard-codes equals the header's offsetof,
 * and writes all values (plus the enum values DiSNI mirrors as Java constants) to a
 * properties file that the Java tests compare against DiSNI's own classes.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "natives.h"

static int failures;
static FILE *props;

static void expect(const char *name, long actual, long wanted) {
  if (actual != wanted) {
    fprintf(stderr, "FAIL %s: %ld, expected %ld\n", name, actual, wanted);
    failures++;
  }
}

static void record(const char *name, long value) {
  fprintf(props, "%s=%ld\n", name, value);
}

#define CHECK_OFFSET(type, field, disni_pos)                                   \
  do {                                                                         \
    expect(#type "." #field, (long)offsetof(struct type, field), disni_pos);   \
    record(#type "." #field, (long)offsetof(struct type, field));              \
  } while (0)

int main(int argc, char **argv) {
  const char *out = argc > 1 ? argv[1] : "layout.properties";
  props = fopen(out, "w");
  if (props == NULL) {
    perror(out);
    return 2;
  }
  fprintf(props, "# sizes, offsets and enum values from the rdma-core headers (test_layout)\n");

  /* 1. What the JNI library reports. */
  expect("_getVersion", JNI_FN(getVersion)(NULL, NULL), 32);
  expect("_getSockAddrInSize", JNI_FN(getSockAddrInSize)(NULL, NULL),
         (long)sizeof(struct sockaddr_in));
  expect("_getIbvSendWRSize", JNI_FN(getIbvSendWRSize)(NULL, NULL),
         (long)sizeof(struct ibv_send_wr));
  expect("_getIbvRecvWRSize", JNI_FN(getIbvRecvWRSize)(NULL, NULL),
         (long)sizeof(struct ibv_recv_wr));
  expect("_getIbvSgeSize", JNI_FN(getIbvSgeSize)(NULL, NULL), (long)sizeof(struct ibv_sge));
  expect("_getIbvWCSize", JNI_FN(getIbvWCSize)(NULL, NULL), (long)sizeof(struct ibv_wc));
  expect("_getRemoteAddressOffset", JNI_FN(getRemoteAddressOffset)(NULL, NULL),
         (long)offsetof(struct ibv_send_wr, wr.rdma.remote_addr));
  expect("_getRKeyOffset", JNI_FN(getRKeyOffset)(NULL, NULL),
         (long)offsetof(struct ibv_send_wr, wr.rdma.rkey));

  record("version", JNI_FN(getVersion)(NULL, NULL));
  record("sizeof.sockaddr_in", (long)sizeof(struct sockaddr_in));
  record("sizeof.ibv_send_wr", (long)sizeof(struct ibv_send_wr));
  record("sizeof.ibv_recv_wr", (long)sizeof(struct ibv_recv_wr));
  record("sizeof.ibv_sge", (long)sizeof(struct ibv_sge));
  record("sizeof.ibv_wc", (long)sizeof(struct ibv_wc));
  record("offset.remote_addr", (long)offsetof(struct ibv_send_wr, wr.rdma.remote_addr));
  record("offset.rkey", (long)offsetof(struct ibv_send_wr, wr.rdma.rkey));

  /* 2. Positions DiSNI's Java side writes/reads without asking (NatIbvSendWR.writeBack,
        NatIbvSge.writeBack, NatIbvRecvWR.writeBack, NatPollCqCall.update, SockAddrIn). */
  CHECK_OFFSET(ibv_send_wr, wr_id, 0);
  CHECK_OFFSET(ibv_send_wr, next, 8);
  CHECK_OFFSET(ibv_send_wr, sg_list, 16);
  CHECK_OFFSET(ibv_send_wr, num_sge, 24);
  CHECK_OFFSET(ibv_send_wr, opcode, 28);
  CHECK_OFFSET(ibv_send_wr, send_flags, 32);
  CHECK_OFFSET(ibv_send_wr, imm_data, 36);
  CHECK_OFFSET(ibv_sge, addr, 0);
  CHECK_OFFSET(ibv_sge, length, 8);
  CHECK_OFFSET(ibv_sge, lkey, 12);
  CHECK_OFFSET(ibv_recv_wr, wr_id, 0);
  CHECK_OFFSET(ibv_recv_wr, next, 8);
  CHECK_OFFSET(ibv_recv_wr, sg_list, 16);
  CHECK_OFFSET(ibv_recv_wr, num_sge, 24);
  CHECK_OFFSET(ibv_wc, wr_id, 0);
  CHECK_OFFSET(ibv_wc, status, 8);
  CHECK_OFFSET(ibv_wc, opcode, 12);
  CHECK_OFFSET(ibv_wc, vendor_err, 16);
  CHECK_OFFSET(ibv_wc, byte_len, 20);
  CHECK_OFFSET(ibv_wc, imm_data, 24);
  CHECK_OFFSET(ibv_wc, qp_num, 28);
  CHECK_OFFSET(ibv_wc, src_qp, 32);
  CHECK_OFFSET(ibv_wc, wc_flags, 36);
  CHECK_OFFSET(ibv_wc, pkey_index, 40);
  CHECK_OFFSET(ibv_wc, slid, 42);
  CHECK_OFFSET(ibv_wc, sl, 44);
  CHECK_OFFSET(ibv_wc, dlid_path_bits, 45);
  CHECK_OFFSET(sockaddr_in, sin_family, 0);
  CHECK_OFFSET(sockaddr_in, sin_port, 2);
  CHECK_OFFSET(sockaddr_in, sin_addr, 4);
  /* The rdma part of the work request union follows the header directly (DiSNI writes
     remote_addr, rkey, reserved there). */
  expect("ibv_send_wr.wr.rdma.rkey - remote_addr",
         (long)(offsetof(struct ibv_send_wr, wr.rdma.rkey) -
                offsetof(struct ibv_send_wr, wr.rdma.remote_addr)), 8);

  /* Enum values DiSNI mirrors as Java constants or enum ordinals. */
  record("IBV_WR_RDMA_WRITE", IBV_WR_RDMA_WRITE);
  record("IBV_WR_RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM);
  record("IBV_WR_SEND", IBV_WR_SEND);
  record("IBV_WR_SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM);
  record("IBV_WR_RDMA_READ", IBV_WR_RDMA_READ);
  record("IBV_WR_ATOMIC_CMP_AND_SWP", IBV_WR_ATOMIC_CMP_AND_SWP);
  record("IBV_WR_ATOMIC_FETCH_AND_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD);
  record("IBV_SEND_FENCE", IBV_SEND_FENCE);
  record("IBV_SEND_SIGNALED", IBV_SEND_SIGNALED);
  record("IBV_SEND_SOLICITED", IBV_SEND_SOLICITED);
  record("IBV_SEND_INLINE", IBV_SEND_INLINE);
  record("IBV_ACCESS_LOCAL_WRITE", IBV_ACCESS_LOCAL_WRITE);
  record("IBV_ACCESS_REMOTE_WRITE", IBV_ACCESS_REMOTE_WRITE);
  record("IBV_ACCESS_REMOTE_READ", IBV_ACCESS_REMOTE_READ);
  record("IBV_ACCESS_REMOTE_ATOMIC", IBV_ACCESS_REMOTE_ATOMIC);
  record("IBV_ACCESS_MW_BIND", IBV_ACCESS_MW_BIND);
  record("IBV_ACCESS_ON_DEMAND", IBV_ACCESS_ON_DEMAND);
  record("IBV_QPT_RC", IBV_QPT_RC);
  record("IBV_QPT_UC", IBV_QPT_UC);
  record("IBV_QPT_UD", IBV_QPT_UD);
  record("IBV_QPS_RESET", IBV_QPS_RESET);
  record("IBV_QPS_RTS", IBV_QPS_RTS);
  record("IBV_QPS_ERR", IBV_QPS_ERR);
  record("RDMA_PS_TCP", RDMA_PS_TCP);
  record("RDMA_PS_UDP", RDMA_PS_UDP);
  record("RDMA_PS_IPOIB", RDMA_PS_IPOIB);
  record("IBV_ODP_SUPPORT_SEND", IBV_ODP_SUPPORT_SEND);
  record("IBV_ODP_SUPPORT_RECV", IBV_ODP_SUPPORT_RECV);
  record("IBV_ODP_SUPPORT_WRITE", IBV_ODP_SUPPORT_WRITE);
  record("IBV_ODP_SUPPORT_READ", IBV_ODP_SUPPORT_READ);
  record("IBV_ODP_SUPPORT_ATOMIC", IBV_ODP_SUPPORT_ATOMIC);
  /* Enum ordinals: IbvWC.IbvWcStatus and RdmaCmEvent.EventType are Java enums whose
     ordinal() DiSNI compares with the native value. */
  record("IBV_WC_SUCCESS", IBV_WC_SUCCESS);
  record("IBV_WC_REM_ACCESS_ERR", IBV_WC_REM_ACCESS_ERR);
  record("IBV_WC_WR_FLUSH_ERR", IBV_WC_WR_FLUSH_ERR);
  record("IBV_WC_RETRY_EXC_ERR", IBV_WC_RETRY_EXC_ERR);
  record("IBV_WC_GENERAL_ERR", IBV_WC_GENERAL_ERR);
  record("RDMA_CM_EVENT_ADDR_RESOLVED", RDMA_CM_EVENT_ADDR_RESOLVED);
  record("RDMA_CM_EVENT_CONNECT_REQUEST", RDMA_CM_EVENT_CONNECT_REQUEST);
  record("RDMA_CM_EVENT_ESTABLISHED", RDMA_CM_EVENT_ESTABLISHED);
  record("RDMA_CM_EVENT_DISCONNECTED", RDMA_CM_EVENT_DISCONNECTED);
  record("RDMA_CM_EVENT_TIMEWAIT_EXIT", RDMA_CM_EVENT_TIMEWAIT_EXIT);

  fclose(props);
  if (failures != 0) {
    fprintf(stderr, "test_layout: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_layout: all sizes, offsets and DiSNI field positions match the rdma-core "
         "headers (%s)\n", out);
  return 0;
}
