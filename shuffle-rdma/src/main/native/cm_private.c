/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * RDMA-CM private data for the verbs transport's connection authentication (CmNative.java):
 * DiSNI 2.1 gives no access to an incoming request's private data, nor to the peer's QP
 * number, and its accept takes no private data. These functions are bound to our own class,
 * not to DiSNI's NativeDispatcher.
 *
 * They also carry the RDMA READ depths: connect and accept take explicit initiator_depth and
 * responder_resources, the depths of a CONNECT_REQUEST or ESTABLISHED event are kept with
 * its private data, and the device's READ depth maxima are queried here.
 *
 * The private data of the last CONNECT_REQUEST or ESTABLISHED event is kept per thread:
 * the CM event loop is the only thread that fetches events on its channel, and it reads the
 * data right after DiSNI's getCmEvent returned, before fetching the next event.
 */
#include <errno.h>
#include <string.h>

#include "cm_private.h"
#include "handles.h"
#include "jni_util.h"

#define CM_NATIVE(name) \
  Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CmNative_##name

static __thread uint8_t last_data[CM_PRIVATE_MAX];
static __thread int last_len;
static __thread uint32_t last_qp_num;
static __thread uint8_t last_initiator_depth;
static __thread uint8_t last_responder_resources;

void cm_private_capture(const struct rdma_cm_event *event) {
  last_len = 0;
  last_qp_num = 0;
  last_initiator_depth = 0;
  last_responder_resources = 0;
  if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST &&
      event->event != RDMA_CM_EVENT_ESTABLISHED) {
    return;
  }
  const struct rdma_conn_param *conn = &event->param.conn;
  int len = conn->private_data == NULL ? 0 : conn->private_data_len;
  if (len > CM_PRIVATE_MAX) {
    len = CM_PRIVATE_MAX;
  }
  if (len > 0) {
    memcpy(last_data, conn->private_data, (size_t)len);
  }
  last_len = len;
  last_qp_num = conn->qp_num;
  last_initiator_depth = conn->initiator_depth;
  last_responder_resources = conn->responder_resources;
}

/* Copies the last event's private data into out; returns how many bytes were copied. */
JNIEXPORT jint JNICALL CM_NATIVE(eventPrivateData)(JNIEnv *env, jclass cls, jbyteArray out) {
  (void)cls;
  if (out == NULL) {
    return 0;
  }
  jsize cap = (*env)->GetArrayLength(env, out);
  jsize n = last_len < cap ? last_len : cap;
  if (n > 0) {
    (*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte *)last_data);
  }
  return n;
}

/* The QP number of the peer that sent the last CONNECT_REQUEST or ESTABLISHED event. */
JNIEXPORT jint JNICALL CM_NATIVE(eventQpNum)(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  return (jint)last_qp_num;
}

/*
 * The READ depths of the last CONNECT_REQUEST or ESTABLISHED event, as the event reports
 * them: responder_resources in bits 0..7, initiator_depth in bits 8..15 (0 for other events).
 */
JNIEXPORT jint JNICALL CM_NATIVE(eventReadDepths)(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  return (jint)last_responder_resources | ((jint)last_initiator_depth << 8);
}

/*
 * The device's RDMA READ depth maxima from ibv_query_device: max_qp_rd_atom (READs one QP
 * serves at once) in bits 0..15, max_qp_init_rd_atom (READs one QP may have outstanding)
 * in bits 16..31, vendor_id in bits 32..63; -errno when the query fails. The context is
 * DiSNI's IbvContext handle (the ibv_context pointer).
 */
JNIEXPORT jlong JNICALL CM_NATIVE(queryReadDepths)(JNIEnv *env, jclass cls, jlong context) {
  (void)env;
  (void)cls;
  if (context == 0) {
    return -EINVAL;
  }
  struct ibv_device_attr attr;
  memset(&attr, 0, sizeof(attr));
  int rc = ibv_query_device(PTR(struct ibv_context, context), &attr);
  if (rc != 0) {
    return rc > 0 ? -(jlong)rc : (jlong)rc;
  }
  int rd = attr.max_qp_rd_atom < 0 ? 0 : (attr.max_qp_rd_atom > 0xffff ? 0xffff
                                                                       : attr.max_qp_rd_atom);
  int init = attr.max_qp_init_rd_atom < 0
                 ? 0
                 : (attr.max_qp_init_rd_atom > 0xffff ? 0xffff : attr.max_qp_init_rd_atom);
  return (jlong)rd | ((jlong)init << 16) | ((jlong)attr.vendor_id << 32);
}

/* Copies a Java array of at most CM_PRIVATE_MAX bytes; -1 (exception pending) otherwise. */
static int copy_private(JNIEnv *env, jbyteArray data, uint8_t *buf, const char *what) {
  if (data == NULL) {
    return 0;
  }
  jsize len = (*env)->GetArrayLength(env, data);
  if (len > CM_PRIVATE_MAX) {
    throw_io_errno(env, what, EINVAL);
    return -1;
  }
  (*env)->GetByteArrayRegion(env, data, 0, len, (jbyte *)buf);
  return (int)len;
}

/* rdma_connect or rdma_accept, with the names its errors carry. */
struct cm_establish {
  int (*call)(struct rdma_cm_id *id, struct rdma_conn_param *param);
  const char *name;     /* the call, for its errno */
  const char *id_what;  /* a bad cm id handle */
  const char *len_what; /* private data too long */
};

static const struct cm_establish CM_CONNECT = {
    rdma_connect, "rdma_connect", "rdma_connect: cm id",
    "rdma_connect (private data longer than 255)"};
static const struct cm_establish CM_ACCEPT = {
    rdma_accept, "rdma_accept", "rdma_accept: cm id",
    "rdma_accept (private data longer than 255)"};

/* The connection parameters (retry counts, private data) and the call; throws on failure. */
static void establish(JNIEnv *env, const struct cm_establish *how, jlong id, jint retry,
                      jint rnr_retry, jint initiator_depth, jint responder_resources,
                      jbyteArray data) {
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, how->id_what);
  if (cm_id == NULL) {
    return;
  }
  uint8_t buf[CM_PRIVATE_MAX];
  int len = copy_private(env, data, buf, how->len_what);
  if (len < 0) {
    return;
  }
  struct rdma_conn_param param;
  cm_fill_conn_param(&param, retry, rnr_retry, initiator_depth,
                     responder_resources);
  param.private_data = len > 0 ? buf : NULL;
  param.private_data_len = (uint8_t)len;
  if (how->call(cm_id, &param) != 0) {
    throw_io_errno(env, how->name, last_errno());
  }
}

JNIEXPORT void JNICALL CM_NATIVE(connect)(JNIEnv *env, jclass cls, jlong id, jint retry,
                                          jint rnr_retry, jint initiator_depth,
                                          jint responder_resources, jbyteArray data) {
  (void)cls;
  establish(env, &CM_CONNECT, id, retry, rnr_retry, initiator_depth, responder_resources,
            data);
}

JNIEXPORT void JNICALL CM_NATIVE(accept)(JNIEnv *env, jclass cls, jlong id, jint retry,
                                         jint rnr_retry, jint initiator_depth,
                                         jint responder_resources, jbyteArray data) {
  (void)cls;
  establish(env, &CM_ACCEPT, id, retry, rnr_retry, initiator_depth, responder_resources,
            data);
}

/* Refuses a connection request (no QP was created for it); 0 or -errno. */
JNIEXPORT jint JNICALL CM_NATIVE(reject)(JNIEnv *env, jclass cls, jlong id) {
  (void)env;
  (void)cls;
  struct rdma_cm_id *cm_id = handle_get(id, HANDLE_CM_ID);
  if (cm_id == NULL) {
    return -EINVAL;
  }
  return rdma_reject(cm_id, NULL, 0) == 0 ? 0 : -last_errno();
}

/*
 * Sets the IP type-of-service byte of a cm id's RoCE traffic (spark.shuffle.rdma.verbs.
 * trafficClass). The kernel reads it when it resolves the route (the path's traffic class
 * and the priority it maps to) and copies a listening id's to the ids it listens with, so
 * it must be set before rdma_resolve_route on outbound ids and before rdma_listen on the
 * listening one. The option takes exactly one byte.
 */
JNIEXPORT void JNICALL CM_NATIVE(setTos)(JNIEnv *env, jclass cls, jlong id, jint tos) {
  (void)cls;
  struct rdma_cm_id *cm_id = require_object(env, id, HANDLE_CM_ID, "rdma_set_option: cm id");
  if (cm_id == NULL) {
    return;
  }
  if (tos < 0 || tos > 255) {
    throw_io_errno(env, "rdma_set_option (RDMA_OPTION_ID_TOS outside 0..255)", EINVAL);
    return;
  }
  uint8_t value = (uint8_t)tos;
  if (rdma_set_option(cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &value, sizeof(value)) != 0) {
    throw_io_errno(env, "rdma_set_option (RDMA_OPTION_ID_TOS)", last_errno());
  }
}
