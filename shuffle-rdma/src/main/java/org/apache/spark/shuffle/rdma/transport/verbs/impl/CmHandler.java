package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;

import com.ibm.disni.verbs.RdmaCmEvent;

/** Receives the RDMA-CM events of one cm id, on the CM thread. */
interface CmHandler {
  void onCmEvent(RdmaCmEvent.EventType type) throws IOException;

  /** The handler's id failed to progress (an exception in onCmEvent, or the transport closed). */
  void onCmFailure(IOException cause);
}
