/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.File
import java.nio.file.Files

import org.apache.spark.{FetchFailed, SparkConf, SparkContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

/**
 * Starting Spark the way these tests need it: `local-cluster` (executors in separate JVMs)
 * from Maven's jars, with the plugin on the executors' class path, and Spark's host-local
 * disk shortcut off so that blocks between executors really cross the transport.
 */
object ClusterSupport {
  val RdmaManager = "org.apache.spark.shuffle.rdma.RdmaShuffleManager"

  /** SPARK_HOME needs only an (empty) jars/ folder when classes come from the class path. */
  def sparkHome(): String = {
    val home = sys.env.getOrElse("SPARK_HOME",
      sys.props.getOrElse("spark.test.home", Files.createTempDirectory("spark-home").toString))
    new File(home, "jars").mkdirs()
    home
  }

  def rdmaConf(appName: String, executors: Int = 2): SparkConf = {
    val home = sparkHome()
    new SparkConf()
      .setMaster(s"local-cluster[$executors,1,1024]")
      .setAppName(appName)
      .set("spark.test.home", home)
      .set("spark.home", home)
      .set("spark.executor.extraClassPath", sys.props("java.class.path"))
      .set("spark.driver.host", "127.0.0.1")
      .set("spark.shuffle.manager", RdmaManager)
      .set("spark.shuffle.rdma.transport", "tcp")
      .set("spark.shuffle.readHostLocalDisk", "false")
      .set("spark.ui.enabled", "false")
      .set("spark.executor.memory", "1g")
  }

  def sortConf(appName: String): SparkConf =
    new SparkConf()
      .setMaster("local[2]")
      .setAppName(appName)
      .set("spark.shuffle.manager", "sort")
      .set("spark.ui.enabled", "false")

  /** Sums Spark's own shuffle-read metrics over all finished tasks. */
  class ShuffleReadListener extends SparkListener {
    @volatile var remoteBlocks = 0L
    @volatile var remoteBytes = 0L
    @volatile var localBlocks = 0L
    @volatile var records = 0L
    /** Successful map tasks: each wrote one map output a reducer executor may index. */
    @volatile var mapTasks = 0L
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = synchronized {
      if (e.taskType == "ShuffleMapTask" && e.reason == org.apache.spark.Success) {
        mapTasks += 1
      }
      if (e.taskMetrics != null) {
        val m = e.taskMetrics.shuffleReadMetrics
        remoteBlocks += m.remoteBlocksFetched
        remoteBytes += m.remoteBytesRead
        localBlocks += m.localBlocksFetched
        records += m.recordsRead
      }
    }
    def reset(): Unit = synchronized {
      remoteBlocks = 0; remoteBytes = 0; localBlocks = 0; records = 0; mapTasks = 0
    }
  }

  /** The plugin's counters summed over all executors. */
  def clusterTotals(): Map[String, Long] = {
    val perExec = RdmaShuffleManager.clusterStats().asScala.values.map(_.asScala)
    perExec.flatMap(_.toSeq).groupBy(_._1).map { case (k, vs) => k -> vs.map(_._2.longValue).sum }
  }

  def waitForListeners(sc: SparkContext): Unit = sc.listenerBus.waitUntilEmpty()

  /**
   * Spark's own `MetadataFetchFailedException` ("Missing an output location for shuffle S
   * partition P"): a reducer of a retried stage that the scheduler started while it was still
   * unregistering the outputs a real fetch failure lost. No block was read, so it names no
   * block manager and map -1; whether one happens is the scheduler's timing, which the plugin
   * does not control and a test must not assume.
   */
  def isMissingOutputLocation(f: FetchFailed): Boolean =
    f.bmAddress == null && f.mapId == -1L && f.message != null &&
      f.message.contains("Missing an output location")

  /** The fetch failures of block reads: every failure but Spark's missing-location ones. */
  def blockReadFailures(failures: Seq[FetchFailed]): List[FetchFailed] =
    failures.filterNot(isMissingOutputLocation).toList
}
