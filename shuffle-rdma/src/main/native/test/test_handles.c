/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The handle table (handles.c) and the entry points that use it, on any host (no RDMA):
 * a handle resolves only while its object lives and only as its own kind; a released,
 * reused, foreign or made-up handle fails cleanly (IOException or a negative result), never
 * dereferences anything; destroyQP on a cm id whose QP was never created is refused.
 * Every destroy entry point destroys its object once: called twice, or by two threads at
 * once, the upstream destroy runs once (counted by fake_rdma.c) and the other call gets the
 * documented error; a destroy that fails upstream keeps the handle usable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "../handles.h"
#include "fake_jni.h"
#include "fake_rdma.h"
#include "natives.h"

/* The plugin's own RDMA-CM call under test here (cm_private.c). */
JNIEXPORT void JNICALL
Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CmNative_setTos(JNIEnv *, jclass, jlong,
                                                                       jint);
#define SET_TOS Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CmNative_setTos

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

#define THROWS(expr, needle)    \
  do {                          \
    (void)(expr);               \
    expect_throw(#expr, needle); \
  } while (0)

static void lifecycle(void) {
  int a, b;
  size_t before = handle_live_count();
  jlong h = handle_register(&a, HANDLE_CQ);
  CHECK(h > 0);
  CHECK(handle_get(h, HANDLE_CQ) == &a);
  CHECK(handle_get(h, HANDLE_QP) == NULL);        /* another kind */
  CHECK(handle_get(0, HANDLE_CQ) == NULL);
  CHECK(handle_get(-1, HANDLE_CQ) == NULL);
  CHECK(handle_get((jlong)(uintptr_t)&a, HANDLE_CQ) == NULL); /* a raw pointer */
  CHECK(handle_get(h + 1, HANDLE_CQ) == NULL);    /* the next slot, never handed out */
  CHECK(handle_get(h + (1L << 24), HANDLE_CQ) == NULL); /* a future generation */
  CHECK(handle_live_count() == before + 1);
  CHECK(handle_release(h, HANDLE_QP) == NULL);    /* wrong kind releases nothing */
  CHECK(handle_release(h, HANDLE_CQ) == &a);
  CHECK(handle_get(h, HANDLE_CQ) == NULL);        /* stale */
  CHECK(handle_release(h, HANDLE_CQ) == NULL);    /* double release */
  CHECK(handle_live_count() == before);
  /* The slot is reused with a new generation: the old handle stays dead. */
  jlong h2 = handle_register(&b, HANDLE_CQ);
  CHECK(h2 > 0 && h2 != h);
  CHECK((h2 & 0xffffff) == (h & 0xffffff));
  CHECK(handle_get(h, HANDLE_CQ) == NULL);
  CHECK(handle_get(h2, HANDLE_CQ) == &b);
  CHECK(handle_set_aux(h2, HANDLE_CQ, 42) && handle_aux(h2, HANDLE_CQ) == 42);
  CHECK(handle_aux(h, HANDLE_CQ) == 0);
  CHECK(handle_release(h2, HANDLE_CQ) == &b);
  CHECK(handle_register(NULL, HANDLE_CQ) == 0);
}

/* Enough handles to span several table pages; release half, the rest still resolve. */
static void many(void) {
  enum { N = 20000 };
  static jlong hs[N];
  static char objs[N];
  for (int i = 0; i < N; i++) {
    hs[i] = handle_register(&objs[i], HANDLE_MR);
    CHECK(hs[i] > 0);
  }
  for (int i = 0; i < N; i += 2) {
    CHECK(handle_release(hs[i], HANDLE_MR) == &objs[i]);
  }
  int wrong = 0;
  for (int i = 0; i < N; i++) {
    void *p = handle_get(hs[i], HANDLE_MR);
    wrong += (i % 2 == 0) ? p != NULL : p != &objs[i];
  }
  CHECK(wrong == 0);
  for (int i = 1; i < N; i += 2) {
    CHECK(handle_release(hs[i], HANDLE_MR) == &objs[i]);
  }
}

/* Threads create, use and destroy; a stale handle must never resolve to anything. */
static atomic_int stale_hits;
static atomic_int wrong_hits;

static void *churn(void *arg) {
  (void)arg;
  char obj[16];
  jlong old[16] = {0};
  for (int i = 0; i < 200000; i++) {
    char *mine = &obj[i % 16];
    jlong h = handle_register(mine, HANDLE_QP);
    if (handle_get(h, HANDLE_QP) != mine) {
      atomic_fetch_add(&wrong_hits, 1);
    }
    if (handle_release(h, HANDLE_QP) != mine) {
      atomic_fetch_add(&wrong_hits, 1);
    }
    old[i % 16] = h;
    for (int j = 0; j < 16; j++) {
      if (old[j] != 0 && handle_get(old[j], HANDLE_QP) != NULL) {
        atomic_fetch_add(&stale_hits, 1);
      }
    }
  }
  return NULL;
}

static void concurrent(void) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    pthread_create(&t[i], NULL, churn, NULL);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
  }
  CHECK(atomic_load(&wrong_hits) == 0);
  CHECK(atomic_load(&stale_hits) == 0);
}

/* The entry points given released handles: exceptions or negative results, no crash. */
static void stale_entry_points(void) {
  char dummy[256];
  memset(dummy, 0, sizeof(dummy));
  jlong cq = handle_register(dummy, HANDLE_CQ);
  jlong qp = handle_register(dummy, HANDLE_QP);
  jlong mr = handle_register(dummy, HANDLE_MR);
  jlong ch = handle_register(dummy, HANDLE_COMP_CHANNEL);
  jlong ec = handle_register(dummy, HANDLE_EVENT_CHANNEL);
  jlong id = handle_register(dummy, HANDLE_CM_ID);
  handle_release(cq, HANDLE_CQ);
  handle_release(qp, HANDLE_QP);
  handle_release(mr, HANDLE_MR);
  handle_release(ch, HANDLE_COMP_CHANNEL);
  handle_release(ec, HANDLE_EVENT_CHANNEL);
  handle_release(id, HANDLE_CM_ID);
  long wc[64];
  THROWS(JNI_FN(pollCQ)(env, NULL, cq, 1, (jlong)(uintptr_t)wc), "stale");
  THROWS(JNI_FN(reqNotifyCQ)(env, NULL, cq, 0), "stale");
  THROWS(JNI_FN(postSend)(env, NULL, qp, (jlong)(uintptr_t)wc), "stale");
  THROWS(JNI_FN(postRecv)(env, NULL, qp, (jlong)(uintptr_t)wc), "stale");
  THROWS(JNI_FN(getQpNum)(env, NULL, qp), "stale");
  THROWS(JNI_FN(modifyQP)(env, NULL, qp, 0), "stale");
  THROWS(JNI_FN(deregMr)(env, NULL, mr), "stale");
  THROWS(JNI_FN(expPrefetchMr)(env, NULL, mr, 0, 16), "stale");
  THROWS(JNI_FN(getCqEvent)(env, NULL, ch, 1), "stale");
  THROWS(JNI_FN(createCQ)(env, NULL, (jlong)(uintptr_t)dummy, ch, 16, 0), "stale");
  THROWS(JNI_FN(createId)(env, NULL, ec, 0x0106), "stale");
  THROWS(JNI_FN(bindAddr)(env, NULL, id, (jlong)(uintptr_t)dummy), "stale");
  THROWS(JNI_FN(getContext)(env, NULL, id), "stale");
  THROWS(JNI_FN(createQP)(env, NULL, id, (jlong)(uintptr_t)dummy, cq, cq, 2, 16, 1, 0),
         "stale");
  CHECK(JNI_FN(destroyCQ)(env, NULL, cq) < 0);
  CHECK(JNI_FN(destroyCompChannel)(env, NULL, ch) < 0);
  CHECK(JNI_FN(destroyEventChannel)(env, NULL, ec) < 0);
  CHECK(JNI_FN(destroyCmId)(env, NULL, id) < 0);
  CHECK(JNI_FN(destroyEp)(env, NULL, id) < 0);
  CHECK(JNI_FN(destroyQP)(env, NULL, id) < 0);
  CHECK(JNI_FN(disconnect)(env, NULL, id) < 0);
  long slots[2];
  CHECK(JNI_FN(getCmEvent)(env, NULL, ec, (jlong)(uintptr_t)&slots[0],
                           (jlong)(uintptr_t)&slots[1], 1) < 0);
  CHECK(!fake_exception_pending());
  /* A handle of one kind passed as another is refused the same way. */
  jlong live_cq = handle_register(dummy, HANDLE_CQ);
  THROWS(JNI_FN(getQpNum)(env, NULL, live_cq), "stale");
  handle_release(live_cq, HANDLE_CQ);
}

/*
 * destroyQP on a live cm id that never got a QP: librdmacm would call ibv_destroy_qp(NULL)
 * and crash; the entry point refuses instead and leaves the id usable.
 */
static void destroy_qp_never_created(void) {
  struct rdma_cm_id id;
  memset(&id, 0, sizeof(id));
  jlong h = handle_register(&id, HANDLE_CM_ID);
  CHECK(JNI_FN(destroyQP)(env, NULL, h) == -EINVAL);
  CHECK(handle_get(h, HANDLE_CM_ID) == &id);
  CHECK(!fake_exception_pending());
  handle_release(h, HANDLE_CM_ID);
}

/*
 * The destroy entry points, each as one call: 0 when it destroyed its object, else its
 * negative result (deregMr, which returns nothing, gives -EINVAL when it threw "stale" and
 * -EIO when it threw anything else).
 */
struct destroy_case {
  const char *name;
  enum fake_call upstream;
  int kind;                 /* the handle kind the entry point takes */
  jint (*destroy)(jlong h);
  int keeps_on_failure;     /* an upstream failure leaves the handle live (retry possible) */
};

static jint destroy_cq(jlong h) { return JNI_FN(destroyCQ)(env, NULL, h); }
static jint destroy_comp_channel(jlong h) { return JNI_FN(destroyCompChannel)(env, NULL, h); }
static jint destroy_event_channel(jlong h) { return JNI_FN(destroyEventChannel)(env, NULL, h); }
static jint destroy_cm_id(jlong h) { return JNI_FN(destroyCmId)(env, NULL, h); }
static jint destroy_ep(jlong h) { return JNI_FN(destroyEp)(env, NULL, h); }
static jint destroy_qp(jlong h) { return JNI_FN(destroyQP)(env, NULL, h); }
static jint dereg_mr(jlong h) {
  JNI_FN(deregMr)(env, NULL, h); /* the fake env keeps exceptions per thread */
  if (!fake_exception_pending()) {
    return 0;
  }
  jint rc = strstr(fake_exception_message(), "stale") != NULL ? -EINVAL : -EIO;
  fake_exception_clear();
  return rc;
}

static const struct destroy_case DESTROYS[] = {
    {"destroyCQ", FAKE_DESTROY_CQ, HANDLE_CQ, destroy_cq, 1},
    {"destroyCompChannel", FAKE_DESTROY_COMP_CHANNEL, HANDLE_COMP_CHANNEL, destroy_comp_channel,
     1},
    {"deregMr", FAKE_DEREG_MR, HANDLE_MR, dereg_mr, 1},
    {"destroyEventChannel", FAKE_DESTROY_EVENT_CHANNEL, HANDLE_EVENT_CHANNEL,
     destroy_event_channel, 0},
    {"destroyCmId", FAKE_DESTROY_ID, HANDLE_CM_ID, destroy_cm_id, 0},
    {"destroyEp", FAKE_DESTROY_EP, HANDLE_CM_ID, destroy_ep, 0},
    {"destroyQP", FAKE_DESTROY_QP, HANDLE_CM_ID, destroy_qp, 0},
};

/* What a destroy acts on: a cm id (with a QP and its handle) or an opaque object. */
struct victim {
  struct rdma_cm_id id;
  char object[64];
  jlong handle;
  jlong qp_handle;
};

static void victim_make(struct victim *v, const struct destroy_case *c) {
  memset(v, 0, sizeof(*v));
  if (c->kind == HANDLE_CM_ID) {
    v->id.qp = &fake_qp;
    v->handle = handle_register(&v->id, HANDLE_CM_ID);
    v->qp_handle = handle_register(&fake_qp, HANDLE_QP);
    handle_set_aux(v->handle, HANDLE_CM_ID, v->qp_handle);
  } else {
    v->handle = handle_register(v->object, c->kind);
  }
}

/* Ends what the destroy left (the cm id of destroyQP, a QP handle nobody released). */
static void victim_clear(struct victim *v) {
  handle_release(v->handle, HANDLE_CM_ID);
  handle_release(v->qp_handle, HANDLE_QP);
}

static void destroy_twice(const struct destroy_case *c) {
  size_t before = handle_live_count();
  struct victim v;
  fake_rdma_reset();
  victim_make(&v, c);
  jint first = c->destroy(v.handle);
  jint second = c->destroy(v.handle);
  if (first != 0 || second != -EINVAL || atomic_load(&fake_calls[c->upstream]) != 1) {
    fprintf(stderr, "FAIL %s twice: returned %d then %d, upstream destroy called %d time(s) "
            "(want 0, -EINVAL, 1)\n", c->name, first, second,
            atomic_load(&fake_calls[c->upstream]));
    failures++;
  }
  victim_clear(&v);
  CHECK(handle_live_count() == before);
}

struct racer {
  const struct destroy_case *c;
  jlong handle;
  pthread_barrier_t *start;
  jint result;
};

static void *race(void *arg) {
  struct racer *r = arg;
  pthread_barrier_wait(r->start);
  r->result = r->c->destroy(r->handle);
  return NULL;
}

/* Two threads destroy the same handle at once, many times: one destroys, one is refused. */
static void destroy_concurrently(const struct destroy_case *c) {
  enum { ROUNDS = 400 };
  size_t before = handle_live_count();
  fake_rdma_reset();
  atomic_store(&fake_destroy_usec, 100);
  int bad_rounds = 0;
  for (int round = 0; round < ROUNDS; round++) {
    struct victim v;
    victim_make(&v, c);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    struct racer r[2] = {{c, v.handle, &start, 1}, {c, v.handle, &start, 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
      pthread_create(&t[i], NULL, race, &r[i]);
    }
    for (int i = 0; i < 2; i++) {
      pthread_join(t[i], NULL);
    }
    pthread_barrier_destroy(&start);
    int won = (r[0].result == 0) + (r[1].result == 0);
    int refused = (r[0].result == -EINVAL) + (r[1].result == -EINVAL);
    if (won != 1 || refused != 1) {
      bad_rounds++;
    }
    victim_clear(&v);
  }
  int calls = atomic_load(&fake_calls[c->upstream]);
  if (bad_rounds != 0 || calls != ROUNDS) {
    fprintf(stderr, "FAIL %s from two threads: upstream destroy called %d times in %d rounds, "
            "%d round(s) without exactly one success and one -EINVAL\n", c->name, calls,
            ROUNDS, bad_rounds);
    failures++;
  }
  atomic_store(&fake_destroy_usec, 0);
  CHECK(handle_live_count() == before);
}

/* An upstream destroy that fails (EBUSY: a CQ still used by a QP) leaves the handle live. */
static void destroy_fails_upstream(const struct destroy_case *c) {
  size_t before = handle_live_count();
  struct victim v;
  fake_rdma_reset();
  victim_make(&v, c);
  atomic_store(&fake_fail_with[c->upstream], EBUSY);
  jint failed = c->destroy(v.handle);
  int live = handle_get(v.handle, c->kind) == (void *)v.object;
  atomic_store(&fake_fail_with[c->upstream], 0);
  jint retried = c->destroy(v.handle);
  if (failed >= 0 || !live || retried != 0 || atomic_load(&fake_calls[c->upstream]) != 2) {
    fprintf(stderr, "FAIL %s failing upstream: returned %d (handle %s), then %d on retry, "
            "upstream called %d time(s)\n", c->name, failed, live ? "live" : "gone", retried,
            atomic_load(&fake_calls[c->upstream]));
    failures++;
  }
  CHECK(handle_live_count() == before);
}

static void destroys(void) {
  for (size_t i = 0; i < sizeof(DESTROYS) / sizeof(DESTROYS[0]); i++) {
    destroy_twice(&DESTROYS[i]);
    destroy_concurrently(&DESTROYS[i]);
    if (DESTROYS[i].keeps_on_failure) {
      destroy_fails_upstream(&DESTROYS[i]);
    }
  }
  fake_rdma_reset();
}

/*
 * createQP asks for the scatter-gather entries the transport uses: each RDMA READ carries
 * one (ReadChainPoster), nothing is ever received, so 1 and 1 (RcQueuePairs), and passes
 * the depths and QP type through.
 */
static void create_qp_attributes(void) {
  char pd[64], cq_object[64];
  struct rdma_cm_id id;
  memset(&id, 0, sizeof(id));
  fake_rdma_reset();
  jlong h = handle_register(&id, HANDLE_CM_ID);
  jlong cq = handle_register(cq_object, HANDLE_CQ);
  jlong qp = JNI_FN(createQP)(env, NULL, h, (jlong)(uintptr_t)pd, cq, cq, IBV_QPT_RC, 16, 1, 0);
  CHECK(qp > 0 && handle_get(qp, HANDLE_QP) == &fake_qp && handle_aux(h, HANDLE_CM_ID) == qp);
  CHECK(!fake_exception_pending());
  const struct ibv_qp_init_attr *a = &fake_last_qp_attr;
  if (a->cap.max_send_sge != 1 || a->cap.max_recv_sge != 1 ||
      atomic_load(&fake_calls[FAKE_CREATE_QP]) != 1) {
    fprintf(stderr, "FAIL createQP asked for %u send and %u receive SGEs in %d call(s) (want "
            "1, 1, 1)\n", a->cap.max_send_sge, a->cap.max_recv_sge,
            atomic_load(&fake_calls[FAKE_CREATE_QP]));
    failures++;
  }
  CHECK(a->cap.max_send_wr == 16 && a->cap.max_recv_wr == 1 && a->cap.max_inline_data == 0);
  CHECK(a->qp_type == IBV_QPT_RC && a->send_cq == (void *)cq_object && a->sq_sig_all == 0);
  /* A device that refuses it: the call throws with the errno, nothing is registered. */
  struct rdma_cm_id id2;
  memset(&id2, 0, sizeof(id2));
  jlong h2 = handle_register(&id2, HANDLE_CM_ID);
  atomic_store(&fake_fail_with[FAKE_CREATE_QP], EINVAL);
  size_t before = handle_live_count();
  THROWS(JNI_FN(createQP)(env, NULL, h2, (jlong)(uintptr_t)pd, cq, cq, IBV_QPT_RC, 16, 1, 0),
         "rdma_create_qp failed");
  CHECK(handle_live_count() == before && handle_aux(h2, HANDLE_CM_ID) == 0);
  handle_release(qp, HANDLE_QP);
  handle_release(h, HANDLE_CM_ID);
  handle_release(h2, HANDLE_CM_ID);
  handle_release(cq, HANDLE_CQ);
  fake_rdma_reset();
}

/*
 * spark.shuffle.rdma.verbs.trafficClass: setTos hands rdma_set_option the TOS option of the
 * id level with the value as one byte, and the transport's order (setTos, then the route)
 * reaches librdmacm in that order; values outside a byte and dead ids are refused before
 * librdmacm is called.
 */
static void traffic_class(void) {
  struct rdma_cm_id id;
  memset(&id, 0, sizeof(id));
  fake_rdma_reset();
  jlong h = handle_register(&id, HANDLE_CM_ID);
  SET_TOS(env, NULL, h, 106);
  JNI_FN(resolveRoute)(env, NULL, h, 2000);
  CHECK(!fake_exception_pending());
  if (fake_last_option_level != RDMA_OPTION_ID || fake_last_option_name != RDMA_OPTION_ID_TOS ||
      fake_last_option_len != 1 || fake_last_option_value[0] != 106) {
    fprintf(stderr, "FAIL setTos: rdma_set_option(level %d, name %d, %zu byte(s), first %u), "
            "want (%d, %d, 1, 106)\n", fake_last_option_level, fake_last_option_name,
            fake_last_option_len, fake_last_option_value[0], RDMA_OPTION_ID, RDMA_OPTION_ID_TOS);
    failures++;
  }
  CHECK(atomic_load(&fake_log_len) == 2 && fake_log[0] == FAKE_SET_OPTION &&
        fake_log[1] == FAKE_RESOLVE_ROUTE);
  SET_TOS(env, NULL, h, 255); /* the whole byte, ECN bits included */
  CHECK(!fake_exception_pending() && fake_last_option_value[0] == 255);
  fake_rdma_reset();
  THROWS(SET_TOS(env, NULL, h, 256), "outside 0..255");
  THROWS(SET_TOS(env, NULL, h, -1), "outside 0..255");
  THROWS(SET_TOS(env, NULL, 0, 106), "null handle");
  /* librdmacm refusing it (an old kernel): the errno reaches Java. */
  atomic_store(&fake_fail_with[FAKE_SET_OPTION], ENOSYS);
  THROWS(SET_TOS(env, NULL, h, 106), "rdma_set_option (RDMA_OPTION_ID_TOS) failed");
  handle_release(h, HANDLE_CM_ID);
  THROWS(SET_TOS(env, NULL, h, 106), "stale");
  CHECK(atomic_load(&fake_calls[FAKE_SET_OPTION]) == 1); /* only the one librdmacm refused */
  fake_rdma_reset();
}

int main(void) {
  env = fake_env();
  lifecycle();
  many();
  concurrent();
  stale_entry_points();
  destroy_qp_never_created();
  destroys();
  create_qp_attributes();
  traffic_class();
  if (failures != 0) {
    fprintf(stderr, "test_handles: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_handles: stale, foreign and made-up handles refused; destroyQP without a QP "
         "refused; every destroy destroys once, also from two threads; createQP's SGEs; the ToS option before the route\n");
  return 0;
}
