/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Shared helpers of the libdisni JNI layer: turning handles (jlong) into pointers and
 * reporting failures as java.io.IOException with the errno text, so that no call ever
 * crashes the JVM on a missing device or a stale handle.
 */
#ifndef SHUFFLE_RDMA_JNI_UTIL_H
#define SHUFFLE_RDMA_JNI_UTIL_H

#include <jni.h>
#include <stdint.h>

/* The JNI contract version DiSNI 2.1's NativeDispatcher checks in its constructor. */
#define DISNI_JNI_VERSION 32

/*
 * What NativeIdentity.version() returns (identity.c); LibraryIdentity.EXPECTED must equal
 * it. Bump both when the Java side starts relying on a new native behaviour.
 */
#define SHUFFLE_RDMA_NATIVE_VERSION "shuffle-rdma-native 4"

#define JNI_FN(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

/* Raw addresses Java passes (buffers, work request lists) and the few objects that are
 * not in the handle table (device contexts, protection domains: never destroyed early). */
#define PTR(type, handle) ((type *)(uintptr_t)(handle))
#define HANDLE(ptr) ((jlong)(uintptr_t)(ptr))

/* Throws IOException("<what> failed: <strerror(err)> (errno <err>)<hint>"). */
void throw_io_errno(JNIEnv *env, const char *what, int err);

/* Throws IOException(message). */
void throw_io(JNIEnv *env, const char *message);

/*
 * Checks a handle passed from Java; on 0 throws "<what>: null handle" and returns 0.
 * Handles (table handles or raw pointers) are positive and never 0 when valid.
 */
int require_handle(JNIEnv *env, jlong handle, const char *what);

/*
 * The object behind a table handle (handles.h) of the given kind; on 0 throws "null
 * handle", on a stale, foreign or made-up handle throws "stale or invalid handle", and
 * returns NULL.
 */
void *require_object(JNIEnv *env, jlong handle, int kind, const char *what);

/* Throws require_object's "stale or invalid handle" IOException. */
void throw_stale(JNIEnv *env, const char *what);

/* errno, or EIO when a library failed without setting it. */
int last_errno(void);

#endif
