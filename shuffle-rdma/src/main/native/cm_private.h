/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * What DiSNI's Java API cannot carry: the private data of RDMA-CM connection messages and
 * the peer's queue pair number (cm_private.c), used by the verbs transport to authenticate
 * connections before rdma_accept.
 */
#ifndef SHUFFLE_RDMA_CM_PRIVATE_H
#define SHUFFLE_RDMA_CM_PRIVATE_H

#include <jni.h>
#include <rdma/rdma_cma.h>

/* rdma_conn_param.private_data_len is a uint8_t. */
#define CM_PRIVATE_MAX 255

/*
 * Remembers, for the calling thread, the private data and remote QP number of a
 * CONNECT_REQUEST or ESTABLISHED event (cleared for any other event). Called by _getCmEvent
 * before it acknowledges the event, since acknowledging frees the private data.
 */
void cm_private_capture(const struct rdma_cm_event *event);

/*
 * Fills RC connection parameters: retry counts clamped to 0..7 and the RDMA READ depths
 * (initiator_depth: READs this side may have outstanding; responder_resources: READs it
 * serves at once). A negative depth means "the device maximum" (librdmacm's RDMA_MAX_*).
 */
void cm_fill_conn_param(struct rdma_conn_param *param, jint retry, jint rnr_retry,
                        jint initiator_depth, jint responder_resources);

#endif
