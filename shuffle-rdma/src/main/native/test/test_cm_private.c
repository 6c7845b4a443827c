/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The private-data functions behind the verbs transport's connection authentication
 * (cm_private.c): what _getCmEvent captures from CONNECT_REQUEST and ESTABLISHED events is
 * what CmNative.eventPrivateData/eventQpNum return, other events clear it, a short Java
 * array gets a prefix, and connect/accept/reject refuse bad handles without crashing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../cm_private.h"
#include "fake_jni.h"
#include "natives.h"

#define CM_NATIVE(name) \
  Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CmNative_##name

JNIEXPORT jint JNICALL CM_NATIVE(eventPrivateData)(JNIEnv *, jclass, jbyteArray);
JNIEXPORT jint JNICALL CM_NATIVE(eventQpNum)(JNIEnv *, jclass);
JNIEXPORT jint JNICALL CM_NATIVE(eventReadDepths)(JNIEnv *, jclass);
JNIEXPORT jlong JNICALL CM_NATIVE(queryReadDepths)(JNIEnv *, jclass, jlong);
JNIEXPORT void JNICALL CM_NATIVE(connect)(JNIEnv *, jclass, jlong, jint, jint, jint, jint,
                                          jbyteArray);
JNIEXPORT void JNICALL CM_NATIVE(accept)(JNIEnv *, jclass, jlong, jint, jint, jint, jint,
                                         jbyteArray);
JNIEXPORT jint JNICALL CM_NATIVE(reject)(JNIEnv *, jclass, jlong);

static int failures;
static JNIEnv *env;

#define CHECK(cond, ...)              \
  do {                                \
    if (!(cond)) {                    \
      fprintf(stderr, "FAIL " __VA_ARGS__); \
      fprintf(stderr, "\n");          \
      failures++;                     \
    }                                 \
  } while (0)

static struct rdma_cm_event event_with(enum rdma_cm_event_type type, const uint8_t *data,
                                       uint8_t len, uint32_t qpn) {
  struct rdma_cm_event e;
  memset(&e, 0, sizeof(e));
  e.event = type;
  e.param.conn.private_data = data;
  e.param.conn.private_data_len = len;
  e.param.conn.qp_num = qpn;
  return e;
}

static void capture(void) {
  uint8_t sent[56];
  for (int i = 0; i < 56; i++) {
    sent[i] = (uint8_t)(i * 7 + 1);
  }
  jbyte out[64];
  memset(out, 0, sizeof(out));
  struct fake_byte_array arr = {64, out};

  struct rdma_cm_event req = event_with(RDMA_CM_EVENT_CONNECT_REQUEST, sent, 56, 0x1234);
  req.param.conn.responder_resources = 16;
  req.param.conn.initiator_depth = 3;
  cm_private_capture(&req);
  CHECK(CM_NATIVE(eventReadDepths)(env, NULL) == (16 | (3 << 8)), "connect request: depths %#x",
        CM_NATIVE(eventReadDepths)(env, NULL));
  memset(sent, 0xee, sizeof(sent)); /* the ack frees it: the copy must not depend on it */
  jint n = CM_NATIVE(eventPrivateData)(env, NULL, fake_byte_array(&arr));
  CHECK(n == 56, "connect request: %d bytes, expected 56", n);
  for (int i = 0; i < 56; i++) {
    CHECK((uint8_t)out[i] == (uint8_t)(i * 7 + 1), "connect request: byte %d differs", i);
  }
  CHECK(CM_NATIVE(eventQpNum)(env, NULL) == 0x1234, "connect request: qp_num");

  /* A shorter Java array gets a prefix, never an overflow. */
  jbyte small[8];
  struct fake_byte_array sarr = {8, small};
  n = CM_NATIVE(eventPrivateData)(env, NULL, fake_byte_array(&sarr));
  CHECK(n == 8 && !fake_exception_pending(), "short array: %d bytes", n);
  fake_exception_clear();

  uint8_t reply[196];
  memset(reply, 0x5a, sizeof(reply));
  struct rdma_cm_event est = event_with(RDMA_CM_EVENT_ESTABLISHED, reply, 196, 77);
  cm_private_capture(&est);
  jbyte big[255];
  struct fake_byte_array barr = {255, big};
  n = CM_NATIVE(eventPrivateData)(env, NULL, fake_byte_array(&barr));
  CHECK(n == 196 && (uint8_t)big[195] == 0x5a, "established: %d bytes", n);
  CHECK(CM_NATIVE(eventQpNum)(env, NULL) == 77, "established: qp_num");

  /* Any other event clears what an earlier one left. */
  struct rdma_cm_event disc = event_with(RDMA_CM_EVENT_DISCONNECTED, reply, 196, 99);
  cm_private_capture(&disc);
  CHECK(CM_NATIVE(eventPrivateData)(env, NULL, fake_byte_array(&barr)) == 0,
        "disconnected: private data left over");
  CHECK(CM_NATIVE(eventQpNum)(env, NULL) == 0, "disconnected: qp_num left over");
  CHECK(CM_NATIVE(eventReadDepths)(env, NULL) == 0, "disconnected: READ depths left over");

  /* A request without private data (an unauthenticated peer) reads as empty. */
  struct rdma_cm_event bare = event_with(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, 56, 5);
  cm_private_capture(&bare);
  CHECK(CM_NATIVE(eventPrivateData)(env, NULL, fake_byte_array(&barr)) == 0,
        "request without private data");
}

static void bad_handles(void) {
  jbyte data[52];
  memset(data, 1, sizeof(data));
  struct fake_byte_array arr = {52, data};
  CM_NATIVE(connect)(env, NULL, 0, 7, 7, 16, 0, fake_byte_array(&arr));
  CHECK(fake_exception_pending() && strstr(fake_exception_message(), "null handle") != NULL,
        "connect(0): '%s'", fake_exception_message());
  fake_exception_clear();
  CM_NATIVE(accept)(env, NULL, 0, 7, 7, 0, 16, fake_byte_array(&arr));
  CHECK(fake_exception_pending() && strstr(fake_exception_message(), "null handle") != NULL,
        "accept(0): '%s'", fake_exception_message());
  fake_exception_clear();
  CM_NATIVE(accept)(env, NULL, 12345, 7, 7, 0, 16, NULL);
  CHECK(fake_exception_pending() && strstr(fake_exception_message(), "stale") != NULL,
        "accept(made-up handle): '%s'", fake_exception_message());
  fake_exception_clear();
  CHECK(CM_NATIVE(reject)(env, NULL, 0) == -EINVAL, "reject(0)");
  CHECK(CM_NATIVE(reject)(env, NULL, 12345) == -EINVAL, "reject(made-up handle)");
  CHECK(!fake_exception_pending(), "reject threw");
  CHECK(CM_NATIVE(queryReadDepths)(env, NULL, 0) == -EINVAL, "queryReadDepths(0)");
}

int main(void) {
  env = fake_env();
  capture();
  bad_handles();
  if (failures != 0) {
    fprintf(stderr, "test_cm_private: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_cm_private: private data, peer QP numbers and READ depths captured per event, "
         "bad handles refused\n");
  return 0;
}
