/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

import com.ibm.disni.verbs.RdmaCmEvent;

/** Receives the RDMA-CM events of one cm id, on the CM thread. */
interface CmHandler {
  /** {@code data}: the event's private data and peer QP number for ESTABLISHED, else null. */
  void onCmEvent(RdmaCmEvent.EventType type, CmConnectData data) throws IOException;

  /** The handler's id failed to progress (an exception in onCmEvent, or the transport closed). */
  void onCmFailure(IOException cause);
}
