/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Verbs half of DiSNI's NativeDispatcher: protection domains, completion channels and
 * queues, memory registration, posting work requests and polling completions.
 *
 * Work request chains and work completion arrays are laid out by DiSNI's Java code in
 * native memory with the sizes/offsets from layout.c, so posting and polling pass those
 * addresses straight to libibverbs without copying.
 *
 * Completion channels, CQs, QPs and memory regions are table handles (handles.h): a stale
 * handle is refused instead of crashing. Device contexts and protection domains are raw
 * pointers (they live as long as the transport).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "handles.h"
#include "jni_util.h"

JNIEXPORT jlong JNICALL JNI_FN(allocPd)(JNIEnv *env, jobject self, jlong context) {
  (void)self;
  if (!require_handle(env, context, "ibv_alloc_pd: context")) {
    return -1;
  }
  errno = 0;
  struct ibv_pd *pd = ibv_alloc_pd(PTR(struct ibv_context, context));
  if (pd == NULL) {
    throw_io_errno(env, "ibv_alloc_pd", last_errno());
    return -1;
  }
  return HANDLE(pd);
}

JNIEXPORT jint JNICALL JNI_FN(deallocPd)(JNIEnv *env, jobject self, jlong pd) {
  (void)env;
  (void)self;
  if (pd == 0) {
    return -EINVAL;
  }
  return -ibv_dealloc_pd(PTR(struct ibv_pd, pd));
}

JNIEXPORT jint JNICALL JNI_FN(getPdHandle)(JNIEnv *env, jobject self, jlong pd) {
  (void)self;
  if (!require_handle(env, pd, "getPdHandle: protection domain")) {
    return -1;
  }
  return (jint)PTR(struct ibv_pd, pd)->handle;
}

JNIEXPORT jint JNICALL JNI_FN(getContextFd)(JNIEnv *env, jobject self, jlong context) {
  (void)self;
  if (!require_handle(env, context, "getContextFd: context")) {
    return -1;
  }
  return PTR(struct ibv_context, context)->cmd_fd;
}

JNIEXPORT jint JNICALL JNI_FN(getContextNumCompVectors)(JNIEnv *env, jobject self,
                                                        jlong context) {
  (void)self;
  if (!require_handle(env, context, "getContextNumCompVectors: context")) {
    return -1;
  }
  return PTR(struct ibv_context, context)->num_comp_vectors;
}

JNIEXPORT jlong JNICALL JNI_FN(createCompChannel)(JNIEnv *env, jobject self, jlong context) {
  (void)self;
  if (!require_handle(env, context, "ibv_create_comp_channel: context")) {
    return -1;
  }
  errno = 0;
  struct ibv_comp_channel *channel = ibv_create_comp_channel(PTR(struct ibv_context, context));
  if (channel == NULL) {
    throw_io_errno(env, "ibv_create_comp_channel", last_errno());
    return -1;
  }
  jlong handle = handle_register(channel, HANDLE_COMP_CHANNEL);
  if (handle == 0) {
    ibv_destroy_comp_channel(channel);
    throw_io_errno(env, "ibv_create_comp_channel (handle table)", ENOMEM);
    return -1;
  }
  return handle;
}

/*
 * Destroys take the handle first and act only if they got it: of two calls (a double
 * destroy, or two threads at once) exactly one destroys and the other gets -EINVAL. A
 * destroy that fails upstream (EBUSY: CQs still use the channel, QPs the CQ) restores the
 * same handle, so the object stays usable and can be destroyed later.
 */
JNIEXPORT jint JNICALL JNI_FN(destroyCompChannel)(JNIEnv *env, jobject self, jlong channel) {
  (void)env;
  (void)self;
  struct ibv_comp_channel *ch = handle_take(channel, HANDLE_COMP_CHANNEL);
  if (ch == NULL) {
    return -EINVAL;
  }
  int rc = ibv_destroy_comp_channel(ch);
  if (rc != 0) {
    handle_restore(channel, HANDLE_COMP_CHANNEL, ch);
    return -rc;
  }
  handle_finish(channel);
  return 0;
}

JNIEXPORT jlong JNICALL JNI_FN(createCQ)(JNIEnv *env, jobject self, jlong context,
                                         jlong channel, jint ncqe, jint comp_vector) {
  (void)self;
  if (!require_handle(env, context, "ibv_create_cq: context")) {
    return -1;
  }
  struct ibv_comp_channel *ch = NULL; /* 0: a CQ without a channel */
  if (channel != 0 &&
      (ch = require_object(env, channel, HANDLE_COMP_CHANNEL, "ibv_create_cq: channel")) ==
          NULL) {
    return -1;
  }
  errno = 0;
  struct ibv_cq *cq =
      ibv_create_cq(PTR(struct ibv_context, context), ncqe, NULL, ch, comp_vector);
  if (cq == NULL) {
    throw_io_errno(env, "ibv_create_cq", last_errno());
    return -1;
  }
  jlong handle = handle_register(cq, HANDLE_CQ);
  if (handle == 0) {
    ibv_destroy_cq(cq);
    throw_io_errno(env, "ibv_create_cq (handle table)", ENOMEM);
    return -1;
  }
  /* Events carry cq_context: its own handle lets CqEvents.waitCqEvent name the CQ that fired
   * (libibverbs only reads the field back; no event can come before the first arm). */
  cq->cq_context = (void *)(uintptr_t)handle;
  return handle;
}

JNIEXPORT jint JNICALL JNI_FN(destroyCQ)(JNIEnv *env, jobject self, jlong cq) {
  (void)env;
  (void)self;
  struct ibv_cq *c = handle_take(cq, HANDLE_CQ);
  if (c == NULL) {
    return -EINVAL;
  }
  int rc = ibv_destroy_cq(c);
  if (rc != 0) {
    handle_restore(cq, HANDLE_CQ, c); /* EBUSY: QPs still use it */
    return -rc;
  }
  handle_finish(cq);
  return 0;
}

/*
 * rdma_cm drives the QP through INIT/RTR/RTS itself, and DiSNI 2.1 passes no attributes
 * (the second argument is always 0), so this only reports the current state.
 */
JNIEXPORT jint JNICALL JNI_FN(modifyQP)(JNIEnv *env, jobject self, jlong qp, jlong attr) {
  (void)self;
  struct ibv_qp *q = require_object(env, qp, HANDLE_QP, "modifyQP: queue pair");
  if (q == NULL) {
    return -1;
  }
  if (attr != 0) {
    throw_io(env, "modifyQP with attributes is not supported; rdma_cm manages QP states");
    return -1;
  }
  struct ibv_qp_attr qp_attr;
  struct ibv_qp_init_attr init_attr;
  int rc = ibv_query_qp(q, &qp_attr, IBV_QP_STATE, &init_attr);
  if (rc != 0) {
    throw_io_errno(env, "ibv_query_qp", rc);
    return -1;
  }
  return (jint)qp_attr.qp_state;
}

JNIEXPORT jint JNICALL JNI_FN(getQpNum)(JNIEnv *env, jobject self, jlong qp) {
  (void)self;
  struct ibv_qp *q = require_object(env, qp, HANDLE_QP, "getQpNum: queue pair");
  if (q == NULL) {
    return -1;
  }
  return (jint)q->qp_num;
}

/* Registers memory; writes lkey, rkey and handle (3 x uint32) to the out addresses. */
JNIEXPORT jlong JNICALL JNI_FN(regMr)(JNIEnv *env, jobject self, jlong pd, jlong addr, jint len,
                                      jint access, jlong lkey_out, jlong rkey_out,
                                      jlong handle_out) {
  (void)self;
  if (!require_handle(env, pd, "ibv_reg_mr: protection domain")) {
    return -1;
  }
  if (addr == 0 || len <= 0 || lkey_out == 0 || rkey_out == 0 || handle_out == 0) {
    throw_io_errno(env, "ibv_reg_mr (address, length or output buffer)", EINVAL);
    return -1;
  }
  errno = 0;
  struct ibv_mr *mr = ibv_reg_mr(PTR(struct ibv_pd, pd), PTR(void, addr), (size_t)len, access);
  if (mr == NULL) {
    throw_io_errno(env, "ibv_reg_mr", last_errno());
    return -1;
  }
  *PTR(uint32_t, lkey_out) = mr->lkey;
  *PTR(uint32_t, rkey_out) = mr->rkey;
  jlong handle = handle_register(mr, HANDLE_MR);
  if (handle == 0) {
    ibv_dereg_mr(mr);
    throw_io_errno(env, "ibv_reg_mr (handle table)", ENOMEM);
    return -1;
  }
  *PTR(uint32_t, handle_out) = mr->handle;
  return handle;
}

JNIEXPORT void JNICALL JNI_FN(deregMr)(JNIEnv *env, jobject self, jlong mr) {
  (void)self;
  if (!require_handle(env, mr, "ibv_dereg_mr: memory region")) {
    return;
  }
  struct ibv_mr *region = handle_take(mr, HANDLE_MR);
  if (region == NULL) {
    throw_stale(env, "ibv_dereg_mr: memory region"); /* a second or concurrent dereg */
    return;
  }
  int rc = ibv_dereg_mr(region);
  if (rc != 0) {
    handle_restore(mr, HANDLE_MR, region);
    throw_io_errno(env, "ibv_dereg_mr", rc);
    return;
  }
  handle_finish(mr);
}

/*
 * On-demand paging support for RC queue pairs, from upstream rdma-core's extended device
 * query: the rc_odp_caps bits (IBV_ODP_SUPPORT_SEND=1, RECV=2, WRITE=4, READ=8, ATOMIC=16,
 * the values DiSNI's IbvContext declares) or -1 when the device has no ODP at all or the
 * query fails.
 */
JNIEXPORT jint JNICALL JNI_FN(queryOdpSupport)(JNIEnv *env, jobject self, jlong context) {
  (void)env;
  (void)self;
  if (context == 0) {
    return -1;
  }
  struct ibv_device_attr_ex attr;
  memset(&attr, 0, sizeof(attr));
  if (ibv_query_device_ex(PTR(struct ibv_context, context), NULL, &attr) != 0) {
    return -1;
  }
  if ((attr.odp_caps.general_caps & IBV_ODP_SUPPORT) == 0) {
    return -1;
  }
  return (jint)attr.odp_caps.per_transport_caps.rc_odp_caps;
}

/* Prefetches (and faults in) an ODP range with upstream ibv_advise_mr. */
JNIEXPORT jint JNICALL JNI_FN(expPrefetchMr)(JNIEnv *env, jobject self, jlong mr, jlong addr,
                                             jint len) {
  (void)self;
  struct ibv_mr *region = require_object(env, mr, HANDLE_MR, "ibv_advise_mr: memory region");
  if (region == NULL) {
    return -1;
  }
  struct ibv_sge sge = {.addr = (uint64_t)addr, .length = (uint32_t)len, .lkey = region->lkey};
  int rc = ibv_advise_mr(region->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
                         &sge, 1);
  if (rc != 0) {
    throw_io_errno(env, "ibv_advise_mr (prefetch)", rc);
    return -1;
  }
  return 0;
}

JNIEXPORT void JNICALL JNI_FN(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wr) {
  (void)self;
  struct ibv_qp *q = require_object(env, qp, HANDLE_QP, "ibv_post_send: queue pair");
  if (q == NULL || !require_handle(env, wr, "ibv_post_send: work request list")) {
    return;
  }
  struct ibv_send_wr *bad = NULL;
  int rc = ibv_post_send(q, PTR(struct ibv_send_wr, wr), &bad);
  if (rc != 0) {
    throw_io_errno(env, "ibv_post_send", rc);
  }
}

JNIEXPORT void JNICALL JNI_FN(postRecv)(JNIEnv *env, jobject self, jlong qp, jlong wr) {
  (void)self;
  struct ibv_qp *q = require_object(env, qp, HANDLE_QP, "ibv_post_recv: queue pair");
  if (q == NULL || !require_handle(env, wr, "ibv_post_recv: work request list")) {
    return;
  }
  struct ibv_recv_wr *bad = NULL;
  int rc = ibv_post_recv(q, PTR(struct ibv_recv_wr, wr), &bad);
  if (rc != 0) {
    throw_io_errno(env, "ibv_post_recv", rc);
  }
}

JNIEXPORT jint JNICALL JNI_FN(pollCQ)(JNIEnv *env, jobject self, jlong cq, jint ne, jlong wc) {
  (void)self;
  struct ibv_cq *c = require_object(env, cq, HANDLE_CQ, "ibv_poll_cq: completion queue");
  if (c == NULL || !require_handle(env, wc, "ibv_poll_cq: completion array")) {
    return -1;
  }
  int n = ibv_poll_cq(c, ne, PTR(struct ibv_wc, wc));
  if (n < 0) {
    throw_io_errno(env, "ibv_poll_cq", -n > 0 ? -n : EIO);
  }
  return n;
}

JNIEXPORT jint JNICALL JNI_FN(reqNotifyCQ)(JNIEnv *env, jobject self, jlong cq, jint solicited) {
  (void)self;
  struct ibv_cq *c = require_object(env, cq, HANDLE_CQ, "ibv_req_notify_cq: completion queue");
  if (c == NULL) {
    return -1;
  }
  int rc = ibv_req_notify_cq(c, solicited);
  if (rc != 0) {
    throw_io_errno(env, "ibv_req_notify_cq", rc);
  }
  return rc;
}

/*
 * Waits up to timeout ms (negative: forever) for a completion event on the channel and
 * returns 0 when one came, -1 otherwise. The event is acknowledged here: DiSNI's Java side
 * cannot tell which CQ fired when several share a channel, and an unacknowledged event
 * would make ibv_destroy_cq wait forever. _ackCqEvent is therefore a no-op. The verbs
 * transport waits with CqEvents.waitCqEvent instead (cq_events.c), which names the CQ.
 */
JNIEXPORT jint JNICALL JNI_FN(getCqEvent)(JNIEnv *env, jobject self, jlong channel,
                                          jint timeout) {
  (void)self;
  struct ibv_comp_channel *ch =
      require_object(env, channel, HANDLE_COMP_CHANNEL, "ibv_get_cq_event: completion channel");
  if (ch == NULL) {
    return -1;
  }
  struct pollfd pfd = {.fd = ch->fd, .events = POLLIN, .revents = 0};
  if (poll(&pfd, 1, timeout < 0 ? -1 : timeout) <= 0) {
    return -1;
  }
  struct ibv_cq *cq = NULL;
  void *cq_context = NULL;
  if (ibv_get_cq_event(ch, &cq, &cq_context) != 0) {
    return -1;
  }
  ibv_ack_cq_events(cq, 1);
  return 0;
}

JNIEXPORT jint JNICALL JNI_FN(ackCqEvent)(JNIEnv *env, jobject self, jlong cq, jint n) {
  (void)env;
  (void)self;
  (void)cq;
  (void)n;
  return 0; /* acknowledged in _getCqEvent */
}
