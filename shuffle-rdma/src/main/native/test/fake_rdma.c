/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fake_rdma.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

atomic_int fake_calls[FAKE_CALLS];
atomic_int fake_fail_with[FAKE_CALLS];
atomic_int fake_destroy_usec;
int fake_log[FAKE_LOG];
atomic_int fake_log_len;
struct ibv_qp_init_attr fake_last_qp_attr;
int fake_last_option_level, fake_last_option_name;
uint8_t fake_last_option_value[8];
size_t fake_last_option_len;
struct ibv_qp fake_qp;
struct ibv_cq fake_cq;
struct ibv_cq *fake_event_cq;
atomic_int fake_acked_events;
struct ibv_cq *fake_acked_cq;

void fake_rdma_reset(void) {
  for (int i = 0; i < FAKE_CALLS; i++) {
    atomic_store(&fake_calls[i], 0);
    atomic_store(&fake_fail_with[i], 0);
  }
  atomic_store(&fake_destroy_usec, 0);
  atomic_store(&fake_log_len, 0);
  memset(&fake_last_qp_attr, 0, sizeof(fake_last_qp_attr));
  fake_last_option_level = fake_last_option_name = -1;
  memset(fake_last_option_value, 0, sizeof(fake_last_option_value));
  fake_last_option_len = 0;
  memset(&fake_cq, 0, sizeof(fake_cq));
  fake_event_cq = NULL;
  atomic_store(&fake_acked_events, 0);
  fake_acked_cq = NULL;
}

/* Counts the call and returns the errno it should fail with (0: succeed). */
static int called(enum fake_call kind) {
  atomic_fetch_add(&fake_calls[kind], 1);
  int n = atomic_fetch_add(&fake_log_len, 1);
  if (n < FAKE_LOG) {
    fake_log[n] = kind;
  }
  return atomic_load(&fake_fail_with[kind]);
}

static int destroyed(enum fake_call kind) {
  int err = called(kind);
  int usec = atomic_load(&fake_destroy_usec);
  if (usec > 0) {
    usleep((useconds_t)usec);
  }
  return err;
}

/* libibverbs returns the errno; librdmacm returns -1 and sets errno. */
int ibv_destroy_cq(struct ibv_cq *cq) {
  (void)cq;
  return destroyed(FAKE_DESTROY_CQ);
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel) {
  (void)channel;
  return destroyed(FAKE_DESTROY_COMP_CHANNEL);
}

int ibv_dereg_mr(struct ibv_mr *mr) {
  (void)mr;
  return destroyed(FAKE_DEREG_MR);
}

static int cm_result(int err) {
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id) {
  (void)id;
  return cm_result(destroyed(FAKE_DESTROY_ID));
}

void rdma_destroy_ep(struct rdma_cm_id *id) {
  (void)id;
  destroyed(FAKE_DESTROY_EP);
}

void rdma_destroy_qp(struct rdma_cm_id *id) {
  destroyed(FAKE_DESTROY_QP);
  id->qp = NULL;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel) {
  (void)channel;
  destroyed(FAKE_DESTROY_EVENT_CHANNEL);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
  (void)pd;
  fake_last_qp_attr = *attr;
  int err = called(FAKE_CREATE_QP);
  if (err == 0) {
    id->qp = &fake_qp;
  }
  return cm_result(err);
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
                    size_t optlen) {
  (void)id;
  fake_last_option_level = level;
  fake_last_option_name = optname;
  fake_last_option_len = optlen;
  memcpy(fake_last_option_value, optval,
         optlen < sizeof(fake_last_option_value) ? optlen : sizeof(fake_last_option_value));
  return cm_result(called(FAKE_SET_OPTION));
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms) {
  (void)id;
  (void)timeout_ms;
  return cm_result(called(FAKE_RESOLVE_ROUTE));
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int comp_vector) {
  (void)comp_vector;
  int err = called(FAKE_CREATE_CQ);
  if (err != 0) {
    errno = err;
    return NULL;
  }
  fake_cq.context = context;
  fake_cq.channel = channel;
  fake_cq.cqe = cqe;
  fake_cq.cq_context = cq_context;
  return &fake_cq;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context) {
  int err = called(FAKE_GET_CQ_EVENT);
  char byte;
  if (read(channel->fd, &byte, 1) != 1) {
    return -1; /* errno from read */
  }
  if (err != 0) {
    errno = err;
    return -1;
  }
  *cq = fake_event_cq;
  *cq_context = fake_event_cq->cq_context;
  return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents) {
  called(FAKE_ACK_CQ_EVENTS);
  fake_acked_cq = cq;
  atomic_fetch_add(&fake_acked_events, (int)nevents);
}
