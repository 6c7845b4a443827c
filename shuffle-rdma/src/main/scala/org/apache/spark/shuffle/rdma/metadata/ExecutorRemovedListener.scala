/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorRemoved}

/**
 * Driver side: tells the master when Spark removes an executor (dynamic allocation released
 * it, it was decommissioned, or it was lost), so the executor leaves the directory readers
 * resolve registrations against. Spark may keep that executor's map outputs (an external
 * shuffle service serves them); readers then fetch them through Spark's own client instead
 * of reading from a process that is gone. Calls the master in the driver's JVM: no executor
 * can send this (docs/security.md).
 */
private[rdma] class ExecutorRemovedListener(master: RdmaMasterEndpoint) extends SparkListener {
  override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit =
    master.executorRemoved(e.executorId)
}
