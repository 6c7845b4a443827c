/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The JNI face of fdpass.c for org.apache.spark.shuffle.rdma.fdpass.UnixSocketNative. Every
 * call returns what fdpass returns (-errno on failure); the Java side turns errors into
 * IOExceptions with its own words, so nothing here throws except on a bad argument.
 */
#include <errno.h>
#include <jni.h>
#include <stdlib.h>
#include <string.h>

#include "fdpass.h"

#define FDPASS_FN(name) Java_org_apache_spark_shuffle_rdma_fdpass_UnixSocketNative_##name
#define EXPORT __attribute__((visibility("default")))

EXPORT jstring JNICALL FDPASS_FN(version)(JNIEnv *env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, fdpass_version());
}

EXPORT jstring JNICALL FDPASS_FN(errorText)(JNIEnv *env, jclass cls, jint err) {
  (void)cls;
  char text[128];
  return (*env)->NewStringUTF(env, strerror_r(err, text, sizeof(text)));
}

EXPORT jint JNICALL FDPASS_FN(maxFds)(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  return FDPASS_MAX_FDS;
}

EXPORT jint JNICALL FDPASS_FN(maxMessage)(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  return FDPASS_MAX_MESSAGE;
}

/* Calls fn(path) with the Java string as modified UTF-8 (paths are ASCII in practice). */
static jint with_path(JNIEnv *env, jstring path, int (*fn)(const char *, int), int arg) {
  if (path == NULL) {
    return -EINVAL;
  }
  const char *p = (*env)->GetStringUTFChars(env, path, NULL);
  if (p == NULL) {
    return -ENOMEM;
  }
  jint rc = fn(p, arg);
  (*env)->ReleaseStringUTFChars(env, path, p);
  return rc;
}

static int connect_adapter(const char *path, int unused) {
  (void)unused;
  return fdpass_connect(path);
}

static int open_adapter(const char *path, int unused) {
  (void)unused;
  return fdpass_open_read(path);
}

static int link_adapter(const char *target, int fd) {
  return fdpass_link(fd, target);
}

EXPORT jint JNICALL FDPASS_FN(link)(JNIEnv *env, jclass cls, jint fd, jstring target) {
  (void)cls;
  return with_path(env, target, link_adapter, fd);
}

EXPORT jint JNICALL FDPASS_FN(listen)(JNIEnv *env, jclass cls, jstring path, jint backlog) {
  (void)cls;
  return with_path(env, path, fdpass_listen, backlog);
}

EXPORT jint JNICALL FDPASS_FN(connect)(JNIEnv *env, jclass cls, jstring path) {
  (void)cls;
  return with_path(env, path, connect_adapter, 0);
}

EXPORT jint JNICALL FDPASS_FN(openRead)(JNIEnv *env, jclass cls, jstring path) {
  (void)cls;
  return with_path(env, path, open_adapter, 0);
}

EXPORT jint JNICALL FDPASS_FN(accept)(JNIEnv *env, jclass cls, jint fd, jint timeoutMs) {
  (void)env;
  (void)cls;
  return fdpass_accept(fd, timeoutMs);
}

EXPORT jint JNICALL FDPASS_FN(send)(JNIEnv *env, jclass cls, jint fd, jbyteArray msg,
                                    jint len, jintArray fds, jint nfds) {
  (void)cls;
  if (msg == NULL || len < 0 || len > (*env)->GetArrayLength(env, msg) || nfds < 0
      || nfds > FDPASS_MAX_FDS || (nfds > 0 && (fds == NULL
      || nfds > (*env)->GetArrayLength(env, fds)))) {
    return -EINVAL;
  }
  if (len == 0 || len > FDPASS_MAX_MESSAGE) {
    return -EMSGSIZE;
  }
  /* A copy, not the array itself: sendmsg may block, which a critical region must not. */
  jbyte *body = malloc((size_t)len);
  if (body == NULL) {
    return -ENOMEM;
  }
  int passed[FDPASS_MAX_FDS];
  (*env)->GetByteArrayRegion(env, msg, 0, len, body);
  if (nfds > 0) {
    (*env)->GetIntArrayRegion(env, fds, 0, nfds, (jint *)passed);
  }
  int rc = fdpass_send(fd, body, (size_t)len, passed, nfds);
  free(body);
  return rc;
}

/* Returns the length (0: peer closed) or -errno; fds gets the descriptors, the rest -1. */
EXPORT jint JNICALL FDPASS_FN(receive)(JNIEnv *env, jclass cls, jint fd, jbyteArray buf,
                                       jintArray fds, jint timeoutMs) {
  (void)cls;
  if (buf == NULL || fds == NULL) {
    return -EINVAL;
  }
  jsize cap = (*env)->GetArrayLength(env, buf);
  jsize max = (*env)->GetArrayLength(env, fds);
  if (cap <= 0 || cap > FDPASS_MAX_MESSAGE || max > FDPASS_MAX_FDS) {
    return -EINVAL;
  }
  jbyte *body = malloc((size_t)cap);
  if (body == NULL) {
    return -ENOMEM;
  }
  int passed[FDPASS_MAX_FDS];
  int n = 0;
  long len = fdpass_recv(fd, body, (size_t)cap, passed, max, &n, timeoutMs);
  if (len > 0) {
    (*env)->SetByteArrayRegion(env, buf, 0, (jsize)len, body);
  }
  free(body);
  for (int i = n; i < max; i++) {
    passed[i] = -1;
  }
  if (max > 0) {
    (*env)->SetIntArrayRegion(env, fds, 0, max, (jint *)passed);
  }
  return (jint)len;
}

EXPORT jint JNICALL FDPASS_FN(peerCredentials)(JNIEnv *env, jclass cls, jint fd,
                                               jintArray out) {
  (void)cls;
  if (out == NULL || (*env)->GetArrayLength(env, out) < 3) {
    return -EINVAL;
  }
  int32_t cred[3];
  int rc = fdpass_peer_credentials(fd, cred);
  if (rc == 0) {
    (*env)->SetIntArrayRegion(env, out, 0, 3, (jint *)cred);
  }
  return rc;
}

EXPORT jint JNICALL FDPASS_FN(stat)(JNIEnv *env, jclass cls, jint fd, jlongArray out) {
  (void)cls;
  if (out == NULL || (*env)->GetArrayLength(env, out) < 3) {
    return -EINVAL;
  }
  int64_t st[3];
  int rc = fdpass_stat(fd, st);
  if (rc == 0) {
    (*env)->SetLongArrayRegion(env, out, 0, 3, (jlong *)st);
  }
  return rc;
}

EXPORT jint JNICALL FDPASS_FN(shutdown)(JNIEnv *env, jclass cls, jint fd) {
  (void)env;
  (void)cls;
  return fdpass_shutdown(fd);
}

EXPORT jint JNICALL FDPASS_FN(close)(JNIEnv *env, jclass cls, jint fd) {
  (void)env;
  (void)cls;
  return fdpass_close(fd);
}
