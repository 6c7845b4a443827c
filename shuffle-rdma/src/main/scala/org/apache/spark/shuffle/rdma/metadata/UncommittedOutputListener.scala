/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.Success
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageSubmitted, SparkListenerTaskEnd}

/**
 * Driver side: a map task attempt that ends without success (failed, killed, e.g. the
 * loser of a speculative race or an attempt that failed after its commit) may have
 * registered and published its output already, since that happens before the MapStatus
 * leaves the executor. Spark never tracks such an output, so no reader can ask for it; this
 * listener has the master forget it and its executor release the registration. Map ids are
 * task attempt ids, so the released output can never be the one Spark tracks. It calls the
 * master in the driver's JVM: no executor can send this release (docs/security.md).
 */
private[rdma] class UncommittedOutputListener(master: RdmaMasterEndpoint)
  extends SparkListener {
  /** Stage id -> shuffle id of every map stage seen (two ints per stage of the application;
   * kept after the stage ends because killed attempts report after that). */
  private val shuffleOfStage = new ConcurrentHashMap[Int, java.lang.Integer]()

  override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
    e.stageInfo.shuffleDepId.foreach { id =>
      shuffleOfStage.put(e.stageInfo.stageId, java.lang.Integer.valueOf(id))
    }

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
    case Success =>
    case _ if e.taskType == "ShuffleMapTask" && e.taskInfo != null =>
      Option(shuffleOfStage.get(e.stageId)).foreach { shuffleId =>
        master.releaseUncommitted(shuffleId.intValue, e.taskInfo.taskId, e.taskInfo.executorId)
      }
    case _ =>
  }
}
