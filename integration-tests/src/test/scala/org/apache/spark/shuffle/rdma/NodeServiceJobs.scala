/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.SparkEnv
import org.apache.spark.rdd.RDD
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.scalatest.funsuite.AnyFunSuite

/**
 * What the node-service suites share (RdmaNodeServiceSuite on local-cluster, RdmaYarnSuite on
 * MiniYARNCluster): the job's size and its result, the libfdpass assumption, a polling wait
 * and a collect that takes each executor's counters inside its tasks.
 */
trait NodeServiceJobs { self: AnyFunSuite =>
  protected val Records = 20000
  protected val MapTasks = 4
  protected val ReducePartitions = 6
  protected val expected: Map[Int, Long] =
    (1 to Records).groupBy(_ % 50).map { case (k, v) => k -> v.map(_.toLong).sum }

  /** Descriptor passing needs libfdpass, which a build without native code leaves out. */
  protected def assumeFdPass(): Unit =
    assume(getClass.getClassLoader.getResource("native/linux-x86_64/libfdpass.so") != null,
      "libfdpass.so not built (-Dnative.skip / SHUFFLE_RDMA_NATIVE=skip): no node service")

  protected def waitUntil(what: String, seconds: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + seconds * 1000000000L
    while (!cond) {
      if (System.nanoTime() >= deadline) fail(s"not within $seconds s: $what")
      Thread.sleep(200)
    }
  }

  /**
   * Collects `rdd` and, after each partition, the counters of the executor that read it.
   * Counters only grow, so the largest snapshot of each executor covers all it read; summed
   * over executors. Taken inside the tasks because dynamic allocation may release an executor
   * (and its counters) before the job ends, when it sat idle for the timeout.
   */
  protected def collectWithCounters(
      rdd: RDD[(Int, Long)]): (Map[Int, Long], Map[String, Long]) = {
    val rows = rdd.mapPartitions { it =>
      val data = it.toArray
      val env = SparkEnv.get
      val stats = env.shuffleManager.asInstanceOf[RdmaShuffleManager].localStats().asScala
        .map { case (k, v) => k -> v.longValue }.toMap
      Iterator((data, env.executorId, stats))
    }.collect()
    val perExecutor = rows.groupBy(_._2).values.map { rs =>
      rs.map(_._3).reduce((a, b) => (a.keySet ++ b.keySet)
        .map(k => k -> math.max(a.getOrElse(k, 0L), b.getOrElse(k, 0L))).toMap)
    }
    val totals = perExecutor.flatMap(_.toSeq).groupBy(_._1).map { case (k, vs) =>
      k -> vs.map(_._2).sum
    }
    (rows.flatMap(_._1).toMap, totals)
  }
}
