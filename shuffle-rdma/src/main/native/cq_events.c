/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Which CQ fired (CqEvents.java). DiSNI 2.1's getCqEvent only says that some CQ on a
 * completion channel fired, so a completion thread serving many CQs on one channel had to
 * drain and re-arm all of them on every event. waitCqEvent returns the fired CQ's handle:
 * createCQ (verbs.c) stores each CQ's own handle as its cq_context, which the event carries.
 *
 * The event is acknowledged here, for its own CQ, before returning: ibv_destroy_cq waits
 * until every event of its CQ was acknowledged, and after this call Java has nothing left
 * to acknowledge (DiSNI's _ackCqEvent stays a no-op). One ack per event costs a mutex; the
 * events are one per re-arm, so batching them would save little and risk a destroy that
 * waits forever on a forgotten count.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "handles.h"
#include "jni_util.h"

#define CQ_EVENTS(name) \
  Java_org_apache_spark_shuffle_rdma_transport_verbs_impl_CqEvents_##name

/*
 * Waits up to timeout_ms (negative: forever) for one event on the completion channel.
 * Returns the fired CQ's handle (> 0); 0 when none fired in time (or a signal cut the wait
 * short); -ENOENT when an event came for a CQ without a live handle (its destroy began, or
 * not created by createCQ); -errno when reading the event failed (nothing acknowledged).
 * A bad channel handle throws IOException.
 */
JNIEXPORT jlong JNICALL CQ_EVENTS(waitCqEvent)(JNIEnv *env, jclass cls, jlong channel,
                                               jint timeout_ms) {
  (void)cls;
  struct ibv_comp_channel *ch =
      require_object(env, channel, HANDLE_COMP_CHANNEL, "ibv_get_cq_event: completion channel");
  if (ch == NULL) {
    return -EINVAL;
  }
  struct pollfd pfd = {.fd = ch->fd, .events = POLLIN, .revents = 0};
  int ready = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
  if (ready == 0 || (ready < 0 && errno == EINTR)) {
    return 0;
  }
  if (ready < 0) {
    return -(jlong)last_errno();
  }
  struct ibv_cq *cq = NULL;
  void *cq_context = NULL;
  errno = 0;
  if (ibv_get_cq_event(ch, &cq, &cq_context) != 0) {
    return -(jlong)last_errno();
  }
  /* Looked up before the ack: until then the CQ cannot be destroyed under us. */
  jlong handle = (jlong)(uintptr_t)cq_context;
  int live = handle_get(handle, HANDLE_CQ) == cq;
  ibv_ack_cq_events(cq, 1);
  return live ? handle : -ENOENT;
}
