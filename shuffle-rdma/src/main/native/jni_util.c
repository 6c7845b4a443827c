/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "jni_util.h"

#include "handles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void throw_io(JNIEnv *env, const char *message) {
  if (env == NULL) {
    return; /* called from C tests without a JVM */
  }
  if ((*env)->ExceptionCheck(env)) {
    return; /* keep the first, most specific exception */
  }
  jclass cls = (*env)->FindClass(env, "java/io/IOException");
  if (cls != NULL) {
    (*env)->ThrowNew(env, cls, message);
  }
}

/* Extra words for the errors users meet most, so the Java message says what to do. */
static const char *hint_for(int err) {
  switch (err) {
    case ENODEV:
    case ENOENT:
    case ENOSYS:
      return "; no RDMA device or rdma_cm kernel support on this host (see ibv_devinfo, "
             "'java -jar shuffle-rdma.jar doctor')";
    case ENOMEM:
      return "; registering memory needs enough locked-memory allowance: raise 'ulimit -l' "
             "(memlock) for the executor";
    case EPERM:
    case EACCES:
      return "; no permission on /dev/infiniband (check the uverbs/rdma_cm device nodes)";
    default:
      return "";
  }
}

void throw_io_errno(JNIEnv *env, const char *what, int err) {
  char text[128];
  char message[512];
  const char *reason = strerror_r(err, text, sizeof(text));
  snprintf(message, sizeof(message), "%s failed: %s (errno %d)%s", what, reason, err,
           hint_for(err));
  throw_io(env, message);
}

int require_handle(JNIEnv *env, jlong handle, const char *what) {
  if (handle == 0) {
    char message[256];
    snprintf(message, sizeof(message), "%s: null handle (object not created or already closed)",
             what);
    throw_io(env, message);
    return 0;
  }
  return 1;
}

int last_errno(void) {
  return errno != 0 ? errno : EIO;
}

void *require_object(JNIEnv *env, jlong handle, int kind, const char *what) {
  if (!require_handle(env, handle, what)) {
    return NULL;
  }
  void *object = handle_get(handle, kind);
  if (object == NULL) {
    throw_stale(env, what);
  }
  return object;
}

void throw_stale(JNIEnv *env, const char *what) {
  char message[256];
  snprintf(message, sizeof(message),
           "%s: stale or invalid handle (object already destroyed, or another kind)", what);
  throw_io(env, message);
}
