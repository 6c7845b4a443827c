/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/* Prototypes of the exported JNI functions, for the C tests (the library needs no header). */
#ifndef SHUFFLE_RDMA_NATIVES_H
#define SHUFFLE_RDMA_NATIVES_H

#include "../jni_util.h"

#define DECL(ret, name, ...) JNIEXPORT ret JNICALL JNI_FN(name)(JNIEnv *, jobject, ##__VA_ARGS__)

DECL(jint, getVersion);
DECL(jint, getSockAddrInSize);
DECL(jint, getIbvRecvWRSize);
DECL(jint, getIbvSendWRSize);
DECL(jint, getIbvSgeSize);
DECL(jint, getIbvWCSize);
DECL(jint, getRemoteAddressOffset);
DECL(jint, getRKeyOffset);
DECL(jlong, createEventChannel);
DECL(jint, destroyEventChannel, jlong);
DECL(jlong, createId, jlong, jshort);
DECL(jint, destroyCmId, jlong);
DECL(jint, destroyEp, jlong);
DECL(void, bindAddr, jlong, jlong);
DECL(void, listen, jlong, jint);
DECL(void, resolveAddr, jlong, jlong, jlong, jint);
DECL(void, resolveRoute, jlong, jint);
DECL(jint, getCmEvent, jlong, jlong, jlong, jint);
DECL(jint, ackCmEvent, jint);
DECL(void, connect, jlong, jint, jint, jlong, jbyte);
DECL(void, accept, jlong, jint, jint);
DECL(jint, disconnect, jlong);
DECL(jlong, createQP, jlong, jlong, jlong, jlong, jint, jint, jint, jint);
DECL(jint, destroyQP, jlong);
DECL(jint, getSrcAddr, jlong, jlong);
DECL(jint, getDstAddr, jlong, jlong);
DECL(jlong, getContext, jlong);
DECL(jlong, allocPd, jlong);
DECL(jint, deallocPd, jlong);
DECL(jint, getPdHandle, jlong);
DECL(jint, getContextFd, jlong);
DECL(jint, getContextNumCompVectors, jlong);
DECL(jlong, createCompChannel, jlong);
DECL(jint, destroyCompChannel, jlong);
DECL(jlong, createCQ, jlong, jlong, jint, jint);
DECL(jint, destroyCQ, jlong);
DECL(jint, modifyQP, jlong, jlong);
DECL(jint, getQpNum, jlong);
DECL(jlong, regMr, jlong, jlong, jint, jint, jlong, jlong, jlong);
DECL(void, deregMr, jlong);
DECL(jint, queryOdpSupport, jlong);
DECL(jint, expPrefetchMr, jlong, jlong, jint);
DECL(void, postSend, jlong, jlong);
DECL(void, postRecv, jlong, jlong);
DECL(jint, pollCQ, jlong, jint, jlong);
DECL(jint, reqNotifyCQ, jlong, jint);
DECL(jint, getCqEvent, jlong, jint);
DECL(jint, ackCqEvent, jlong, jint);

#endif
