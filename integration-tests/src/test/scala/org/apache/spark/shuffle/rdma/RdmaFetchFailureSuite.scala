/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{FetchFailed, SparkContext, SparkEnv}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * A reader that meets a revoked key must fail the fetch the way Spark expects (a
 * FetchFailedException naming the right executor, shuffle, map and reduce partition), so the
 * DAG scheduler re-runs the lost map outputs and the job still returns the right answer.
 */
class RdmaFetchFailureSuite extends AnyFunSuite with BeforeAndAfterAll {
  import ClusterSupport._

  private var sc: SparkContext = _
  private val failures = ArrayBuffer[FetchFailed]()

  override def beforeAll(): Unit = {
    sc = new SparkContext(rdmaConf("rdma-fetch-failure"))
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
        case f: FetchFailed => failures.synchronized(failures += f)
        case _ =>
      }
    })
  }

  override def afterAll(): Unit = if (sc != null) sc.stop()

  test("revoked registrations become fetch failures and the map stage is recomputed") {
    val pairs = sc.parallelize(1 to 20000, 4).map(i => (i % 50, i.toLong))
    val expected = (1 to 20000).groupBy(_ % 50).map { case (k, v) => k -> v.map(_.toLong).sum }
    val summed = pairs.reduceByKey(_ + _, 6)
    summed.count() // map stage done: outputs registered on both executors

    // Revoke every registration on every executor; files stay, keys die.
    val revoked = sc.parallelize(1 to 20, 20).map { _ =>
      SparkEnv.get.shuffleManager.asInstanceOf[RdmaShuffleManager].revokeAllRegistrations()
    }.collect().sum
    assert(revoked > 0)

    // A new reduce over the same (cached) map outputs: remote reads hit revoked keys.
    val result = summed.mapValues(identity).collect().toMap
    assert(result == expected)
    waitForListeners(sc)
    // Spark's own missing-location failures (a retried stage's reducer started while outputs
    // were being unregistered) read no block: left out (ClusterSupport.isMissingOutputLocation).
    val read = blockReadFailures(failures.synchronized(failures.toList))
    assert(read.nonEmpty, "revoked keys must surface as fetch failures")
    val shuffleId = summed.dependencies.head.asInstanceOf[org.apache.spark.ShuffleDependency[_, _, _]]
      .shuffleId
    read.foreach { f =>
      assert(f.shuffleId == shuffleId)
      assert(f.bmAddress != null && f.bmAddress.executorId != "driver")
      assert(f.mapId >= 0 && f.mapIndex >= 0 && f.mapIndex < 4, f)
      assert(f.reduceId >= 0 && f.reduceId < 6, f)
      // tcp: the server's one refusal text; verbs: the NIC's remote access error.
      assert(f.message.contains("no live registered region under this key covers the range")
        || f.message.contains("IBV_WC_REM_ACCESS_ERR"), f.message)
    }
  }
}
