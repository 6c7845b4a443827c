/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Proof that this libdisni is the plugin's own native layer, not upstream DiSNI's: the Java
 * side relies on behaviour only this library has (it acknowledges rdma_cm and CQ events
 * itself, so DiSNI's ack calls are no-ops here; with upstream's library, destroying a CQ or a
 * cm id waits forever for acknowledgements nobody sends). The loader checks that this symbol
 * is exported before it loads an installed copy (LibraryIdentity) and calls it right after
 * loading any copy (NativeIdentity); a library without it, or with another version, is
 * refused.
 */
#include "jni_util.h"

JNIEXPORT jstring JNICALL
Java_org_apache_spark_shuffle_rdma_transport_verbs_loader_isolated_NativeIdentity_version(
    JNIEnv *env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, SHUFFLE_RDMA_NATIVE_VERSION);
}
