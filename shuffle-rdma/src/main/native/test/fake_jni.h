/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * A JNIEnv good enough for the library's error paths: FindClass/ThrowNew/ExceptionCheck
 * record the exception instead of a JVM, so C tests can check every message without Java.
 */
#ifndef SHUFFLE_RDMA_FAKE_JNI_H
#define SHUFFLE_RDMA_FAKE_JNI_H

#include <jni.h>

JNIEnv *fake_env(void);
/* The pending exception's class and message ("" when none), and clearing it. */
const char *fake_exception_class(void);
const char *fake_exception_message(void);
int fake_exception_pending(void);
void fake_exception_clear(void);

/* A Java byte[] of the fake env: GetArrayLength and Get/SetByteArrayRegion work on it. */
struct fake_byte_array {
  jsize length;
  jbyte *data;
};
jbyteArray fake_byte_array(struct fake_byte_array *array);

#endif
