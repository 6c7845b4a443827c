/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * A stand-in for the rdma-core calls whose effect the C tests must observe (fake_rdma.c).
 * Linked into a test executable, its definitions take the place of libibverbs' and
 * librdmacm's for the library objects linked with it, so a test can count destroys, make
 * one fail, and see the attributes and options the entry points pass, on a host without
 * RDMA. Every other rdma-core symbol still comes from the real libraries.
 */
#ifndef SHUFFLE_RDMA_FAKE_RDMA_H
#define SHUFFLE_RDMA_FAKE_RDMA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

enum fake_call {
  FAKE_DESTROY_CQ,
  FAKE_DESTROY_COMP_CHANNEL,
  FAKE_DEREG_MR,
  FAKE_DESTROY_ID,
  FAKE_DESTROY_EP,
  FAKE_DESTROY_QP,
  FAKE_DESTROY_EVENT_CHANNEL,
  FAKE_CREATE_QP,
  FAKE_SET_OPTION,
  FAKE_RESOLVE_ROUTE,
  FAKE_CREATE_CQ,
  FAKE_GET_CQ_EVENT,
  FAKE_ACK_CQ_EVENTS,
  FAKE_CALLS
};

/* Calls of each kind since the last fake_rdma_reset. */
extern atomic_int fake_calls[FAKE_CALLS];
/* Errno the next calls of a kind fail with (0: they succeed). */
extern atomic_int fake_fail_with[FAKE_CALLS];
/* Microseconds each destroy takes, to widen the window two racing callers could share. */
extern atomic_int fake_destroy_usec;

/* Order of the calls (kinds), as far as FAKE_LOG entries go; fake_log_len counts them. */
#define FAKE_LOG 64
extern int fake_log[FAKE_LOG];
extern atomic_int fake_log_len;

/* What the last rdma_create_qp and rdma_set_option got. */
extern struct ibv_qp_init_attr fake_last_qp_attr;
extern int fake_last_option_level, fake_last_option_name;
extern uint8_t fake_last_option_value[8];
extern size_t fake_last_option_len;

/* The QP rdma_create_qp hands out (id->qp points here after a successful call). */
extern struct ibv_qp fake_qp;

/* The CQ ibv_create_cq hands out (its cq_context is what the caller passed). */
extern struct ibv_cq fake_cq;

/*
 * ibv_get_cq_event reads one byte from the channel's fd (a test writes it to a pipe) and
 * reports fake_event_cq with its cq_context; ibv_ack_cq_events adds to fake_acked_events
 * and remembers the CQ in fake_acked_cq.
 */
extern struct ibv_cq *fake_event_cq;
extern atomic_int fake_acked_events;
extern struct ibv_cq *fake_acked_cq;

void fake_rdma_reset(void);

#endif
