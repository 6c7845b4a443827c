/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Struct sizes and field offsets that DiSNI's Java side asks for at start-up. The Java code
 * serializes ibv_send_wr / ibv_sge / ibv_recv_wr chains and reads ibv_wc arrays in native
 * memory itself, so these values must be those of the rdma-core headers this library is
 * compiled against: they come straight from sizeof/offsetof, never from constants.
 */
#include <netinet/in.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include "jni_util.h"

JNIEXPORT jint JNICALL JNI_FN(getVersion)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return DISNI_JNI_VERSION;
}

JNIEXPORT jint JNICALL JNI_FN(getSockAddrInSize)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)sizeof(struct sockaddr_in);
}

JNIEXPORT jint JNICALL JNI_FN(getIbvRecvWRSize)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)sizeof(struct ibv_recv_wr);
}

JNIEXPORT jint JNICALL JNI_FN(getIbvSendWRSize)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)sizeof(struct ibv_send_wr);
}

JNIEXPORT jint JNICALL JNI_FN(getIbvSgeSize)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)sizeof(struct ibv_sge);
}

JNIEXPORT jint JNICALL JNI_FN(getIbvWCSize)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)sizeof(struct ibv_wc);
}

JNIEXPORT jint JNICALL JNI_FN(getRemoteAddressOffset)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
}

JNIEXPORT jint JNICALL JNI_FN(getRKeyOffset)(JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return (jint)offsetof(struct ibv_send_wr, wr.rdma.rkey);
}
