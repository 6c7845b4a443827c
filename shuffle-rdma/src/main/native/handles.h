/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Handles for the native objects whose use after destruction would crash the JVM (event and
 * completion channels, cm ids, queue pairs, completion queues, memory regions). Java gets
 * an index into a table plus a generation and a kind, never the pointer: a handle used after
 * its object was destroyed (or its slot reused), of another kind, or made up, resolves to
 * NULL and the call fails with an IOException or a negative result instead.
 *
 * Layout of a handle (always > 0, as DiSNI's Java side expects of object ids):
 *   bits  0..23  slot index + 1 (0 is never a slot)
 *   bits 24..47  generation of the slot, bumped on every reuse (never 0)
 *   bits 48..55  kind
 * Lookups are lock-free (two atomic loads of the slot's stamp around the pointer load);
 * registering and releasing take a mutex. Slots live in pages that are never freed, so a
 * lookup never touches freed table memory.
 */
#ifndef SHUFFLE_RDMA_HANDLES_H
#define SHUFFLE_RDMA_HANDLES_H

#include <jni.h>
#include <stddef.h>

enum handle_kind {
  HANDLE_EVENT_CHANNEL = 1,
  HANDLE_CM_ID = 2,
  HANDLE_COMP_CHANNEL = 3,
  HANDLE_CQ = 4,
  HANDLE_QP = 5,
  HANDLE_MR = 6,
};

/* A new handle for ptr (not NULL), or 0 when the table is full (16M live objects). */
jlong handle_register(void *ptr, int kind);

/* The object of a live handle of this kind; NULL for 0, stale, foreign or made-up handles. */
void *handle_get(jlong handle, int kind);

/* Ends a live handle and returns its object (the caller destroys it); NULL if not live. */
void *handle_release(jlong handle, int kind);

/*
 * handle_release in two steps, for destroys that may fail upstream (EBUSY). handle_take
 * ends the handle as handle_release does (every lookup, take and release of it fails from
 * now on, so of two racing destroys exactly one gets the object) but keeps its slot from
 * reuse; the caller then calls exactly one of handle_finish (the object is gone: the slot
 * may be reused) or handle_restore (the destroy failed: the same handle lives again).
 */
void *handle_take(jlong handle, int kind);
void handle_finish(jlong handle);
void handle_restore(jlong handle, int kind, void *ptr);

/* A second value kept with a live handle (a cm id's queue pair handle); 0 if not live. */
jlong handle_aux(jlong handle, int kind);
int handle_set_aux(jlong handle, int kind, jlong aux);

/* Live handles (tests). */
size_t handle_live_count(void);

#endif
