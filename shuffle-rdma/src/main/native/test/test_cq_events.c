/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * CqEvents.waitCqEvent (cq_events.c), on any host (fake_rdma.c stands in for libibverbs):
 * createCQ makes each CQ's cq_context its own handle, so waitCqEvent names the CQ that
 * fired among those sharing a completion channel; it acknowledges that CQ's event once;
 * a wait that times out returns 0 without reading or acknowledging anything; a failed read
 * is not acknowledged; an event whose CQ has no live handle is acknowledged and reported as
 * -ENOENT (the caller drains every CQ); bad channel handles throw.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../handles.h"
#include "fake_jni.h"
#include "fake_rdma.h"
#include "natives.h"

JNIEXPORT jlong JNICALL
Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CqEvents_waitCqEvent(JNIEnv *, jclass,
                                                                            jlong, jint);
#define WAIT_CQ_EVENT Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CqEvents_waitCqEvent

static int failures;
static JNIEnv *env;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                    \
    }                                                                \
  } while (0)

static void expect_throw(const char *call, const char *needle) {
  if (!fake_exception_pending()) {
    fprintf(stderr, "FAIL %s: no exception\n", call);
    failures++;
  } else if (strstr(fake_exception_message(), needle) == NULL) {
    fprintf(stderr, "FAIL %s: message '%s' lacks '%s'\n", call, fake_exception_message(),
            needle);
    failures++;
  }
  fake_exception_clear();
}

#define THROWS(expr, needle)     \
  do {                           \
    (void)(expr);                \
    expect_throw(#expr, needle); \
  } while (0)

static int pipefd[2];
static struct ibv_comp_channel channel;
static jlong channel_handle;

static void fire(void) {
  CHECK(write(pipefd[1], "e", 1) == 1);
}

static long elapsed_ms(const struct timespec *from) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - from->tv_sec) * 1000 + (now.tv_nsec - from->tv_nsec) / 1000000;
}

/* The CQ's own handle is its cq_context, and the event names it; one ack, for that CQ. */
static void names_the_fired_cq(void) {
  fake_rdma_reset();
  char context[64];
  jlong cq = JNI_FN(createCQ)(env, NULL, (jlong)(uintptr_t)context, channel_handle, 16, 0);
  CHECK(!fake_exception_pending());
  CHECK(cq > 0 && handle_get(cq, HANDLE_CQ) == &fake_cq);
  CHECK(fake_cq.channel == &channel);
  if (fake_cq.cq_context != (void *)(uintptr_t)cq) {
    fprintf(stderr, "FAIL createCQ: cq_context %p, want the CQ's handle %#llx\n",
            fake_cq.cq_context, (unsigned long long)cq);
    failures++;
  }
  /* A second CQ on the same channel (set up as createCQ sets it up). */
  struct ibv_cq other;
  memset(&other, 0, sizeof(other));
  jlong other_handle = handle_register(&other, HANDLE_CQ);
  other.cq_context = (void *)(uintptr_t)other_handle;

  fake_event_cq = &fake_cq;
  fire();
  jlong got = WAIT_CQ_EVENT(env, NULL, channel_handle, 1000);
  CHECK(!fake_exception_pending());
  if (got != cq) {
    fprintf(stderr, "FAIL waitCqEvent: returned %lld, want the fired CQ %lld\n", (long long)got,
            (long long)cq);
    failures++;
  }
  CHECK(atomic_load(&fake_acked_events) == 1 && fake_acked_cq == &fake_cq);

  fake_event_cq = &other;
  fire();
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 1000) == other_handle);
  CHECK(atomic_load(&fake_acked_events) == 2 && fake_acked_cq == &other);
  CHECK(atomic_load(&fake_calls[FAKE_GET_CQ_EVENT]) == 2);

  handle_release(other_handle, HANDLE_CQ);
  handle_release(cq, HANDLE_CQ);
}

/* Nothing fired: 0 after about the timeout, nothing read, nothing acknowledged. */
static void times_out(void) {
  fake_rdma_reset();
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 30) == 0);
  long ms = elapsed_ms(&start);
  CHECK(ms >= 25); /* it slept: a caller looping on it does not spin */
  CHECK(!fake_exception_pending());
  CHECK(atomic_load(&fake_calls[FAKE_GET_CQ_EVENT]) == 0);
  CHECK(atomic_load(&fake_calls[FAKE_ACK_CQ_EVENTS]) == 0);
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 0) == 0); /* a non-blocking check */
}

/* An event of a CQ without a live handle: acknowledged (or its destroy would wait), -ENOENT. */
static void unknown_cq(void) {
  fake_rdma_reset();
  struct ibv_cq anonymous;
  memset(&anonymous, 0, sizeof(anonymous)); /* cq_context NULL */
  fake_event_cq = &anonymous;
  fire();
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 1000) == -ENOENT);
  CHECK(atomic_load(&fake_acked_events) == 1 && fake_acked_cq == &anonymous);

  struct ibv_cq gone;
  memset(&gone, 0, sizeof(gone));
  jlong h = handle_register(&gone, HANDLE_CQ);
  gone.cq_context = (void *)(uintptr_t)h;
  handle_release(h, HANDLE_CQ); /* its destroy has begun */
  fake_event_cq = &gone;
  fire();
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 1000) == -ENOENT);
  CHECK(atomic_load(&fake_acked_events) == 2 && fake_acked_cq == &gone);
  CHECK(!fake_exception_pending());
}

/* ibv_get_cq_event failing: -errno, and no acknowledgement of an event never received. */
static void read_fails(void) {
  fake_rdma_reset();
  struct ibv_cq cq;
  memset(&cq, 0, sizeof(cq));
  fake_event_cq = &cq;
  atomic_store(&fake_fail_with[FAKE_GET_CQ_EVENT], EIO);
  fire();
  CHECK(WAIT_CQ_EVENT(env, NULL, channel_handle, 1000) == -EIO);
  CHECK(atomic_load(&fake_calls[FAKE_ACK_CQ_EVENTS]) == 0);
  CHECK(!fake_exception_pending());
  fake_rdma_reset();
}

static void bad_channels(void) {
  fake_rdma_reset();
  THROWS(WAIT_CQ_EVENT(env, NULL, 0, 10), "null handle");
  struct ibv_comp_channel dead;
  memset(&dead, 0, sizeof(dead));
  jlong h = handle_register(&dead, HANDLE_COMP_CHANNEL);
  handle_release(h, HANDLE_COMP_CHANNEL);
  THROWS(WAIT_CQ_EVENT(env, NULL, h, 10), "stale");
  char dummy[64];
  jlong cq_handle = handle_register(dummy, HANDLE_CQ);
  THROWS(WAIT_CQ_EVENT(env, NULL, cq_handle, 10), "stale"); /* a CQ is not a channel */
  handle_release(cq_handle, HANDLE_CQ);
  CHECK(atomic_load(&fake_calls[FAKE_GET_CQ_EVENT]) == 0);
}

int main(void) {
  env = fake_env();
  if (pipe(pipefd) != 0) {
    perror("pipe");
    return 1;
  }
  memset(&channel, 0, sizeof(channel));
  channel.fd = pipefd[0];
  channel_handle = handle_register(&channel, HANDLE_COMP_CHANNEL);
  names_the_fired_cq();
  times_out();
  unknown_cq();
  read_fails();
  bad_channels();
  handle_release(channel_handle, HANDLE_COMP_CHANNEL);
  if (failures != 0) {
    fprintf(stderr, "test_cq_events: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_cq_events: waitCqEvent names the fired CQ (its cq_context is its handle) and "
         "acknowledges it once; timeouts read nothing; unknown CQs -ENOENT; failed reads not "
         "acknowledged; bad channels refused\n");
  return 0;
}
