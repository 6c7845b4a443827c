/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Stands in for an upstream DiSNI libdisni.so installed on java.library.path: it exports a
 * NativeDispatcher entry point but not the plugin's identity symbol, so the loader must
 * refuse it (BundledLibraryTest / LibraryIdentityTest).
 */
#include <jni.h>

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getVersion(
    JNIEnv *env, jobject self) {
  (void)env;
  (void)self;
  return 32;
}
