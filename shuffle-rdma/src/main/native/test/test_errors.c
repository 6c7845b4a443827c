/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Error paths: every entry point given a null handle must throw an IOException (or return
 * a negative value for the int-returning calls that DiSNI declares without exceptions),
 * never crash. Creating an event channel must either work (a host with RDMA) or fail with
 * a message that carries the errno text and what to do (a host without, like CI).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fake_jni.h"
#include "natives.h"

static int failures;
static JNIEnv *env;

static void expect_throw(const char *call, const char *needle) {
  if (!fake_exception_pending()) {
    fprintf(stderr, "FAIL %s: no exception\n", call);
    failures++;
  } else if (strcmp(fake_exception_class(), "java/io/IOException") != 0) {
    fprintf(stderr, "FAIL %s: threw %s\n", call, fake_exception_class());
    failures++;
  } else if (needle != NULL && strstr(fake_exception_message(), needle) == NULL) {
    fprintf(stderr, "FAIL %s: message '%s' lacks '%s'\n", call, fake_exception_message(),
            needle);
    failures++;
  }
  fake_exception_clear();
}

static void expect_negative(const char *call, long value) {
  if (value >= 0) {
    fprintf(stderr, "FAIL %s: returned %ld, expected < 0\n", call, value);
    failures++;
  }
  if (fake_exception_pending()) {
    fprintf(stderr, "FAIL %s: threw although declared without exceptions\n", call);
    failures++;
  }
  fake_exception_clear();
}

#define THROWS(expr, needle) \
  do {                       \
    (void)(expr);            \
    expect_throw(#expr, needle); \
  } while (0)

static void null_handles(void) {
  THROWS(JNI_FN(createId)(env, NULL, 0, 0x0106), "null handle");
  THROWS(JNI_FN(bindAddr)(env, NULL, 0, 0), "null handle");
  THROWS(JNI_FN(listen)(env, NULL, 0, 10), "null handle");
  THROWS(JNI_FN(resolveAddr)(env, NULL, 0, 0, 0, 1000), "null handle");
  THROWS(JNI_FN(resolveRoute)(env, NULL, 0, 1000), "null handle");
  THROWS(JNI_FN(connect)(env, NULL, 0, 7, 7, 0, 0), "null handle");
  THROWS(JNI_FN(accept)(env, NULL, 0, 7, 7), "null handle");
  THROWS(JNI_FN(createQP)(env, NULL, 0, 0, 0, 0, IBV_QPT_RC, 16, 1, 0), "null handle");
  THROWS(JNI_FN(getContext)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(allocPd)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(getPdHandle)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(getContextFd)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(getContextNumCompVectors)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(createCompChannel)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(createCQ)(env, NULL, 0, 0, 16, 0), "null handle");
  THROWS(JNI_FN(modifyQP)(env, NULL, 0, 0), "null handle");
  THROWS(JNI_FN(getQpNum)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(regMr)(env, NULL, 0, 0, 4096, IBV_ACCESS_REMOTE_READ, 0, 0, 0), "null handle");
  THROWS(JNI_FN(deregMr)(env, NULL, 0), "null handle");
  THROWS(JNI_FN(expPrefetchMr)(env, NULL, 0, 0, 4096), "null handle");
  THROWS(JNI_FN(postSend)(env, NULL, 0, 0), "null handle");
  THROWS(JNI_FN(postRecv)(env, NULL, 0, 0), "null handle");
  THROWS(JNI_FN(pollCQ)(env, NULL, 0, 16, 0), "null handle");
  THROWS(JNI_FN(reqNotifyCQ)(env, NULL, 0, 0), "null handle");
  THROWS(JNI_FN(getCqEvent)(env, NULL, 0, 10), "null handle");

  expect_negative("_destroyEventChannel(0)", JNI_FN(destroyEventChannel)(env, NULL, 0));
  expect_negative("_destroyCmId(0)", JNI_FN(destroyCmId)(env, NULL, 0));
  expect_negative("_destroyEp(0)", JNI_FN(destroyEp)(env, NULL, 0));
  expect_negative("_destroyQP(0)", JNI_FN(destroyQP)(env, NULL, 0));
  expect_negative("_disconnect(0)", JNI_FN(disconnect)(env, NULL, 0));
  expect_negative("_getSrcAddr(0)", JNI_FN(getSrcAddr)(env, NULL, 0, 0));
  expect_negative("_getDstAddr(0)", JNI_FN(getDstAddr)(env, NULL, 0, 0));
  expect_negative("_getCmEvent(0)", JNI_FN(getCmEvent)(env, NULL, 0, 0, 0, 10));
  expect_negative("_deallocPd(0)", JNI_FN(deallocPd)(env, NULL, 0));
  expect_negative("_destroyCompChannel(0)", JNI_FN(destroyCompChannel)(env, NULL, 0));
  expect_negative("_destroyCQ(0)", JNI_FN(destroyCQ)(env, NULL, 0));
  expect_negative("_queryOdpSupport(0)", JNI_FN(queryOdpSupport)(env, NULL, 0));
  if (JNI_FN(ackCmEvent)(env, NULL, 0) != 0 || JNI_FN(ackCqEvent)(env, NULL, 0, 1) != 0) {
    fprintf(stderr, "FAIL ack calls must be no-ops returning 0\n");
    failures++;
  }
}

/* With a device: a channel and an id work. Without: a clear errno message. */
static void event_channel(void) {
  jlong channel = JNI_FN(createEventChannel)(env, NULL);
  if (channel == -1) {
    const char *msg = fake_exception_message();
    printf("test_errors: no rdma_cm here, as reported: %s\n", msg);
    if (strstr(msg, "rdma_create_event_channel failed: ") == NULL ||
        strstr(msg, "errno") == NULL) {
      fprintf(stderr, "FAIL unclear message: '%s'\n", msg);
      failures++;
    }
    fake_exception_clear();
    return;
  }
  if (fake_exception_pending()) {
    fprintf(stderr, "FAIL exception despite a channel\n");
    failures++;
    fake_exception_clear();
  }
  /* No event can be pending on a fresh channel: a short wait returns -1. */
  long slots[2];
  if (JNI_FN(getCmEvent)(env, NULL, channel, (jlong)(uintptr_t)&slots[0],
                         (jlong)(uintptr_t)&slots[1], 10) != -1) {
    fprintf(stderr, "FAIL event on a fresh channel\n");
    failures++;
  }
  jlong id = JNI_FN(createId)(env, NULL, channel, 0x0106);
  if (id > 0) {
    /* Unbound id: no device context yet, which must be an exception, not a crash. */
    THROWS(JNI_FN(getContext)(env, NULL, id), "not bound");
    JNI_FN(destroyCmId)(env, NULL, id);
  }
  fake_exception_clear();
  JNI_FN(destroyEventChannel)(env, NULL, channel);
  printf("test_errors: rdma_cm event channel created and destroyed\n");
}

static void device_list(void) {
  int n = 0;
  errno = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  if (list == NULL) {
    printf("test_errors: ibv_get_device_list: %s (no verbs devices)\n", strerror(errno));
    return;
  }
  printf("test_errors: %d verbs device(s)\n", n);
  ibv_free_device_list(list);
}

int main(void) {
  env = fake_env();
  null_handles();
  event_channel();
  device_list();
  if (failures != 0) {
    fprintf(stderr, "test_errors: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_errors: every entry point fails cleanly on bad handles\n");
  return 0;
}
