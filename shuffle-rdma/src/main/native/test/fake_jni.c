/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fake_jni.h"

#include <stdio.h>
#include <string.h>

/* Per thread, as a JVM keeps a pending exception per thread (tests call from several). */
static _Thread_local char pending_class[256];
static _Thread_local char pending_message[1024];
static _Thread_local int pending;

static jclass JNICALL fake_find_class(JNIEnv *env, const char *name) {
  (void)env;
  snprintf(pending_class, sizeof(pending_class), "%s", name);
  return (jclass)pending_class; /* any non-NULL value */
}

static jint JNICALL fake_throw_new(JNIEnv *env, jclass cls, const char *message) {
  (void)env;
  (void)cls;
  snprintf(pending_message, sizeof(pending_message), "%s", message);
  pending = 1;
  return 0;
}

static jboolean JNICALL fake_exception_check(JNIEnv *env) {
  (void)env;
  return pending ? JNI_TRUE : JNI_FALSE;
}

static jsize JNICALL fake_array_length(JNIEnv *env, jarray array) {
  (void)env;
  return ((struct fake_byte_array *)array)->length;
}

/* Out-of-range regions record ArrayIndexOutOfBoundsException, as a JVM would throw. */
static int fake_range_ok(struct fake_byte_array *a, jsize start, jsize len) {
  if (start < 0 || len < 0 || start + len > a->length) {
    snprintf(pending_class, sizeof(pending_class), "java/lang/ArrayIndexOutOfBoundsException");
    snprintf(pending_message, sizeof(pending_message), "%d+%d of %d", start, len, a->length);
    pending = 1;
    return 0;
  }
  return 1;
}

static void JNICALL fake_get_bytes(JNIEnv *env, jbyteArray array, jsize start, jsize len,
                                   jbyte *buf) {
  (void)env;
  struct fake_byte_array *a = (struct fake_byte_array *)array;
  if (fake_range_ok(a, start, len)) {
    memcpy(buf, a->data + start, (size_t)len);
  }
}

static void JNICALL fake_set_bytes(JNIEnv *env, jbyteArray array, jsize start, jsize len,
                                   const jbyte *buf) {
  (void)env;
  struct fake_byte_array *a = (struct fake_byte_array *)array;
  if (fake_range_ok(a, start, len)) {
    memcpy(a->data + start, buf, (size_t)len);
  }
}

jbyteArray fake_byte_array(struct fake_byte_array *array) {
  return (jbyteArray)array;
}

static struct JNINativeInterface_ table;
static const struct JNINativeInterface_ *env_ptr;

JNIEnv *fake_env(void) {
  memset(&table, 0, sizeof(table));
  table.FindClass = fake_find_class;
  table.ThrowNew = fake_throw_new;
  table.ExceptionCheck = fake_exception_check;
  table.GetArrayLength = fake_array_length;
  table.GetByteArrayRegion = fake_get_bytes;
  table.SetByteArrayRegion = fake_set_bytes;
  env_ptr = &table;
  return (JNIEnv *)&env_ptr;
}

const char *fake_exception_class(void) {
  return pending ? pending_class : "";
}

const char *fake_exception_message(void) {
  return pending ? pending_message : "";
}

int fake_exception_pending(void) {
  return pending;
}

void fake_exception_clear(void) {
  pending = 0;
  pending_class[0] = '\0';
  pending_message[0] = '\0';
}
