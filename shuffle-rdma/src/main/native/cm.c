/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * RDMA connection manager half of DiSNI's NativeDispatcher: event channels, cm ids,
 * address/route resolution, connect/accept and queue pairs created through rdma_cm.
 *
 * Event channels, cm ids and queue pairs are table handles (handles.h), not pointers: a
 * stale one is refused instead of crashing. A cm id's handle is also kept in id->context, so
 * events (which name ids by pointer) are reported with handles; an id created by a
 * connection request is registered when its event arrives. A cm id's slot keeps the handle
 * of its queue pair as its aux value.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "cm_private.h"
#include "handles.h"
#include "jni_util.h"

JNIEXPORT jlong JNICALL JNI_FN(createEventChannel)(JNIEnv *env, jobject self) {
  (void)self;
  errno = 0;
  struct rdma_event_channel *channel = rdma_create_event_channel();
  if (channel == NULL) {
    throw_io_errno(env, "rdma_create_event_channel", last_errno());
    return -1;
  }
  jlong handle = handle_register(channel, HANDLE_EVENT_CHANNEL);
  if (handle == 0) {
    rdma_destroy_event_channel(channel);
    throw_io_errno(env, "rdma_create_event_channel (handle table)", ENOMEM);
    return -1;
  }
  return handle;
}

JNIEXPORT jint JNICALL JNI_FN(destroyEventChannel)(JNIEnv *env, jobject self, jlong channel) {
  (void)env;
  (void)self;
  struct rdma_event_channel *ch = handle_release(channel, HANDLE_EVENT_CHANNEL);
  if (ch == NULL) {
    return -EINVAL;
  }
  rdma_destroy_event_channel(ch);
  return 0;
}

JNIEXPORT jlong JNICALL JNI_FN(createId)(JNIEnv *env, jobject self, jlong channel, jshort ps) {
  (void)self;
  struct rdma_event_channel *ch =
      require_object(env, channel, HANDLE_EVENT_CHANNEL, "rdma_create_id: event channel");
  if (ch == NULL) {
    return -1;
  }
  struct rdma_cm_id *id = NULL;
  if (rdma_create_id(ch, &id, NULL, (enum rdma_port_space)(unsigned short)ps) != 0) {
    throw_io_errno(env, "rdma_create_id", last_errno());
    return -1;
  }
  jlong handle = handle_register(id, HANDLE_CM_ID);
  if (handle == 0) {
    rdma_destroy_id(id);
    throw_io_errno(env, "rdma_create_id (handle table)", ENOMEM);
    return -1;
  }
  id->context = (void *)(uintptr_t)handle;
  return handle;
}

/* Ends the handle of the cm id's queue pair, if it has one; returns whether it had. */
static int release_qp_handle(jlong id) {
  jlong qp = handle_aux(id, HANDLE_CM_ID);
  handle_set_aux(id, HANDLE_CM_ID, 0);
  return qp != 0 && handle_release(qp, HANDLE_QP) != NULL;
}

/*
 * Takes the cm id's handle (and its queue pair's) for a destroy; NULL when another call has
 * it already, so of two destroys of one id (in turn or at once) only one reaches librdmacm.
 */
static struct rdma_cm_id *release_cm_id(jlong id) {
  jlong qp = handle_aux(id, HANDLE_CM_ID); /* read while the id is live */
  struct rdma_cm_id *cm_id = handle_release(id, HANDLE_CM_ID);
  if (cm_id != NULL && qp != 0) {
    handle_release(qp, HANDLE_QP);
  }
  return cm_id;
}

JNIEXPORT jint JNICALL JNI_FN(destroyCmId)(JNIEnv *env, jobject self, jlong id) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = release_cm_id(id);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  return rdma_destroy_id(cm_id) == 0 ? 0 : -last_errno();
}

JNIEXPORT jint JNICALL JNI_FN(destroyEp)(JNIEnv *env, jobject self, jlong id) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = release_cm_id(id);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  rdma_destroy_ep(cm_id);
  return 0;
}

/* DiSNI writes a struct sockaddr_in (16 bytes, AF_INET) at the given address. */
static int check_inet(JNIEnv *env, jlong addr, const char *what) {
  if (!require_handle(env, addr, what)) {
    return 0;
  }
  if (PTR(struct sockaddr, addr)->sa_family != AF_INET) {
    throw_io_errno(env, what, EAFNOSUPPORT);
    return 0;
  }
  return 1;
}

JNIEXPORT void JNICALL JNI_FN(bindAddr)(JNIEnv *env, jobject self, jlong id, jlong addr) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_bind_addr: cm id");
  if (cm_id == NULL || !check_inet(env, addr, "rdma_bind_addr")) {
    return;
  }
  if (rdma_bind_addr(cm_id, PTR(struct sockaddr, addr)) != 0) {
    throw_io_errno(env, "rdma_bind_addr", last_errno());
  }
}

JNIEXPORT void JNICALL JNI_FN(listen)(JNIEnv *env, jobject self, jlong id, jint backlog) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_listen: cm id");
  if (cm_id == NULL) {
    return;
  }
  if (rdma_listen(cm_id, backlog) != 0) {
    throw_io_errno(env, "rdma_listen", last_errno());
  }
}

JNIEXPORT void JNICALL JNI_FN(resolveAddr)(JNIEnv *env, jobject self, jlong id, jlong src,
                                           jlong dst, jint timeout) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_resolve_addr: cm id");
  if (cm_id == NULL || !check_inet(env, dst, "rdma_resolve_addr")) {
    return;
  }
  if (src != 0 && !check_inet(env, src, "rdma_resolve_addr (source)")) {
    return;
  }
  if (rdma_resolve_addr(cm_id, PTR(struct sockaddr, src),
                        PTR(struct sockaddr, dst), timeout) != 0) {
    throw_io_errno(env, "rdma_resolve_addr", last_errno());
  }
}

JNIEXPORT void JNICALL JNI_FN(resolveRoute)(JNIEnv *env, jobject self, jlong id, jint timeout) {
  (void)self;
  struct rdma_cm_id *cm_id =
      require_object(env, id, HANDLE_CM_ID, "rdma_resolve_route: cm id");
  if (cm_id == NULL) {
    return;
  }
  if (rdma_resolve_route(cm_id, timeout) != 0) {
    throw_io_errno(env, "rdma_resolve_route", last_errno());
  }
}

/*
 * Waits up to timeout ms (negative: forever) for one CM event. On success writes the
 * handles of the listening id (for CONNECT_REQUEST; else 0) and of the event's id (a
 * connection request's new id is registered here), acknowledges the event at once and
 * returns its type; returns -1 when no event came. The immediate ack is deliberate: DiSNI's _ackCmEvent(int) gets only the event type,
 * so it cannot name the event to ack, and acking early keeps rdma_destroy_id from blocking.
 */
JNIEXPORT jint JNICALL JNI_FN(getCmEvent)(JNIEnv *env, jobject self, jlong channel,
                                          jlong listen_out, jlong id_out, jint timeout) {
  (void)self;
  (void)env;
  struct rdma_event_channel *ch = handle_get(channel, HANDLE_EVENT_CHANNEL);
  if (ch == NULL || listen_out == 0 || id_out == 0) {
    return -EINVAL;
  }
  struct pollfd pfd = {.fd = ch->fd, .events = POLLIN, .revents = 0};
  int ready = poll(&pfd, 1, timeout < 0 ? -1 : timeout);
  if (ready <= 0) {
    return -1;
  }
  struct rdma_cm_event *event = NULL;
  if (rdma_get_cm_event(ch, &event) != 0) {
    return -1;
  }
  jint type = (jint)event->event;
  jlong id_handle;
  if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
    /* A new id; librdmacm copied the listener's context (its handle) into it. */
    id_handle = handle_register(event->id, HANDLE_CM_ID);
    if (id_handle == 0) {
      struct rdma_cm_id *refused = event->id;
      rdma_ack_cm_event(event);
      rdma_reject(refused, NULL, 0);
      rdma_destroy_id(refused);
      return -1;
    }
    event->id->context = (void *)(uintptr_t)id_handle;
  } else {
    id_handle = event->id == NULL ? 0 : (jlong)(uintptr_t)event->id->context;
  }
  *PTR(uint64_t, listen_out) =
      event->listen_id == NULL ? 0 : (uint64_t)(uintptr_t)event->listen_id->context;
  *PTR(uint64_t, id_out) = (uint64_t)id_handle;
  cm_private_capture(event); /* before the ack frees the event's private data */
  rdma_ack_cm_event(event);
  return type;
}

JNIEXPORT jint JNICALL JNI_FN(ackCmEvent)(JNIEnv *env, jobject self, jint event) {
  (void)env;
  (void)self;
  (void)event;
  return 0; /* already acknowledged in _getCmEvent */
}

/*
 * DiSNI's Java API does not pass RDMA READ depths: its connect/accept (below) let librdmacm
 * use the device maxima (RDMA_MAX_*), negotiated down to what the peer offers. The verbs
 * transport uses CmNative's connect/accept instead, which pass explicit depths.
 */
static uint8_t depth_or_max(jint depth, uint8_t max) {
  return depth < 0 ? max : (uint8_t)(depth > 255 ? 255 : depth);
}

void cm_fill_conn_param(struct rdma_conn_param *param, jint retry, jint rnr_retry,
                        jint initiator_depth, jint responder_resources) {
  memset(param, 0, sizeof(*param));
  param->responder_resources = depth_or_max(responder_resources, RDMA_MAX_RESP_RES);
  param->initiator_depth = depth_or_max(initiator_depth, RDMA_MAX_INIT_DEPTH);
  param->retry_count = (uint8_t)(retry < 0 ? 7 : (retry > 7 ? 7 : retry));
  param->rnr_retry_count = (uint8_t)(rnr_retry < 0 ? 7 : (rnr_retry > 7 ? 7 : rnr_retry));
}

JNIEXPORT void JNICALL JNI_FN(connect)(JNIEnv *env, jobject self, jlong id, jint retry,
                                       jint rnr_retry, jlong private_data, jbyte private_len) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_connect: cm id");
  if (cm_id == NULL) {
    return;
  }
  struct rdma_conn_param param;
  cm_fill_conn_param(&param, retry, rnr_retry, -1, -1);
  if (private_data != 0 && private_len != 0) {
    param.private_data = PTR(void, private_data);
    param.private_data_len = (uint8_t)private_len;
  }
  if (rdma_connect(cm_id, &param) != 0) {
    throw_io_errno(env, "rdma_connect", last_errno());
  }
}

JNIEXPORT void JNICALL JNI_FN(accept)(JNIEnv *env, jobject self, jlong id, jint retry,
                                      jint rnr_retry) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_accept: cm id");
  if (cm_id == NULL) {
    return;
  }
  struct rdma_conn_param param;
  cm_fill_conn_param(&param, retry, rnr_retry, -1, -1);
  if (rdma_accept(cm_id, &param) != 0) {
    throw_io_errno(env, "rdma_accept", last_errno());
  }
}

JNIEXPORT jint JNICALL JNI_FN(disconnect)(JNIEnv *env, jobject self, jlong id) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = handle_get(id, HANDLE_CM_ID);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  return rdma_disconnect(cm_id) == 0 ? 0 : -last_errno();
}

JNIEXPORT jlong JNICALL JNI_FN(createQP)(JNIEnv *env, jobject self, jlong id, jlong pd,
                                         jlong send_cq, jlong recv_cq, jint qp_type,
                                         jint max_send_wr, jint max_recv_wr, jint max_inline) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_create_qp: cm id");
  if (cm_id == NULL || !require_handle(env, pd, "rdma_create_qp: protection domain")) {
    return -1;
  }
  struct ibv_cq *scq = require_object(env, send_cq, HANDLE_CQ, "rdma_create_qp: send CQ");
  struct ibv_cq *rcq =
      scq == NULL ? NULL : require_object(env, recv_cq, HANDLE_CQ, "rdma_create_qp: receive CQ");
  if (rcq == NULL) {
    return -1;
  }
  if (cm_id->qp != NULL) {
    throw_io(env, "rdma_create_qp: this cm id has a queue pair already");
    return -1;
  }
  struct ibv_qp_init_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.send_cq = scq;
  attr.recv_cq = rcq;
  attr.qp_type = (enum ibv_qp_type)qp_type;
  attr.cap.max_send_wr = (uint32_t)max_send_wr;
  attr.cap.max_recv_wr = (uint32_t)max_recv_wr;
  attr.cap.max_inline_data = (uint32_t)max_inline;
  attr.sq_sig_all = 0;
  /*
   * DiSNI's Java API passes no SGE counts. The transport's READs carry one SGE each and it
   * posts no receives (RcQueuePairs), so ask for one of each: more would only size every
   * send and receive queue entry for entries never used.
   */
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  struct ibv_qp *qp = rdma_create_qp(cm_id, PTR(struct ibv_pd, pd), &attr) == 0 ? cm_id->qp : NULL;
  if (qp == NULL) {
    throw_io_errno(env, "rdma_create_qp", last_errno());
    return -1;
  }
  jlong handle = handle_register(qp, HANDLE_QP);
  if (handle == 0) {
    rdma_destroy_qp(cm_id);
    throw_io_errno(env, "rdma_create_qp (handle table)", ENOMEM);
    return -1;
  }
  handle_set_aux(id, HANDLE_CM_ID, handle);
  return handle;
}

/*
 * Takes the cm id, as DiSNI passes it. A QP that was never created (or is destroyed
 * already) is refused: librdmacm would call ibv_destroy_qp(NULL) and crash.
 */
JNIEXPORT jint JNICALL JNI_FN(destroyQP)(JNIEnv *env, jobject self, jlong id) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = handle_get(id, HANDLE_CM_ID);
  /* Only the call that ended the QP's handle destroys it (a second one finds none). */
  if (cm_id == NULL || cm_id->qp == NULL || !release_qp_handle(id)) {
    return -EINVAL;
  }
  rdma_destroy_qp(cm_id);
  return 0;
}

/* Copies an IPv4 endpoint of the id into DiSNI's sockaddr_in buffer. */
static jint copy_addr(struct sockaddr *from, jlong to) {
  if (to == 0 || from == NULL) {
    return -EINVAL;
  }
  if (from->sa_family != AF_INET) {
    return -EAFNOSUPPORT;
  }
  memcpy(PTR(void, to), from, sizeof(struct sockaddr_in));
  return 0;
}

JNIEXPORT jint JNICALL JNI_FN(getSrcAddr)(JNIEnv *env, jobject self, jlong id, jlong addr) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = handle_get(id, HANDLE_CM_ID);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  return copy_addr(rdma_get_local_addr(cm_id), addr);
}

JNIEXPORT jint JNICALL JNI_FN(getDstAddr)(JNIEnv *env, jobject self, jlong id, jlong addr) {
  (void)env;
  (void)self;
  struct rdma_cm_id *cm_id = handle_get(id, HANDLE_CM_ID);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  return copy_addr(rdma_get_peer_addr(cm_id), addr);
}

JNIEXPORT jlong JNICALL JNI_FN(getContext)(JNIEnv *env, jobject self, jlong id) {
  (void)self;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "getContext: cm id");
  if (cm_id == NULL) {
    return -1;
  }
  struct ibv_context *verbs = cm_id->verbs;
  if (verbs == NULL) {
    throw_io(env, "cm id is not bound to an RDMA device yet (bind or resolve an address "
                  "first)");
    return -1;
  }
  return HANDLE(verbs);
}
