/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.execution.joins.SortMergeJoinExec
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * Every workload under the RDMA shuffle manager (tcp transport) on a local-cluster of two
 * executor JVMs, compared with the same workload under Spark's built-in sort shuffle, once
 * with the Java serializer and once with Kryo (which takes Spark's serialized-shuffle path).
 * Each test also proves from counters that remote blocks went through the plugin.
 */
abstract class RdmaShuffleSuiteBase(serializer: Option[String]) extends AnyFunSuite
  with BeforeAndAfterAll {
  import ClusterSupport._

  private var expected: Map[String, Seq[String]] = Map.empty
  private var spark: SparkSession = _
  private val listener = new ShuffleReadListener

  private def withSerializer(b: SparkSession.Builder): SparkSession.Builder =
    serializer.fold(b)(s => b.config("spark.serializer", s))

  override def beforeAll(): Unit = {
    super.beforeAll()
    val sortConfBase = sortConf(s"sort-baseline-${getClass.getSimpleName}")
    ShuffleWorkloads.sqlConf.foreach { case (k, v) => sortConfBase.set(k, v) }
    val sort = withSerializer(SparkSession.builder().config(sortConfBase)).getOrCreate()
    try {
      expected = ShuffleWorkloads.all.map { case (name, w) => name -> w(sort) }.toMap
    } finally {
      sort.stop()
    }
    val conf = rdmaConf(s"rdma-${getClass.getSimpleName}")
    ShuffleWorkloads.sqlConf.foreach { case (k, v) => conf.set(k, v) }
    spark = withSerializer(SparkSession.builder().config(conf)).getOrCreate()
    spark.sparkContext.addSparkListener(listener)
  }

  override def afterAll(): Unit = {
    try {
      if (spark != null) spark.stop()
    } finally {
      super.afterAll()
    }
  }

  ShuffleWorkloads.all.foreach { case (name, workload) =>
    test(name) {
      val sc = spark.sparkContext
      waitForListeners(sc)
      listener.reset()
      val before = clusterTotals()
      val result = workload(spark)
      waitForListeners(sc)
      val after = clusterTotals()
      def delta(k: String): Long = after.getOrElse(k, 0L) - before.getOrElse(k, 0L)

      assert(result == expected(name), s"$name differs from the sort shuffle's result")
      assert(result.nonEmpty)
      // Remote blocks moved, all of them through the plugin's transport: Spark counts a
      // remote block only when its BlockStoreClient (ours) delivered it.
      assert(listener.remoteBlocks > 0, "no block crossed executors: the test proves nothing")
      assert(delta("reader.remoteBlocks") == listener.remoteBlocks)
      assert(delta("reader.remoteBytes") == listener.remoteBytes)
      assert(delta("reader.failedBlocks") == 0)
      // One data READ per block at most (adjacent blocks of one output share one; Spark
      // never asks for an empty block and no block here crosses a 1 GiB region), and one
      // index READ per (reducer executor, map output) at most: the index cache (32m) never
      // evicts here. Servers answered them all.
      val executors = RdmaShuffleManager.clusterStats().size
      assert(delta("reader.dataReads") >= 1)
      assert(delta("reader.dataReads") + delta("reader.coalescedBlocks") >= listener.remoteBlocks)
      assert(delta("reader.dataReads") <= listener.remoteBlocks)
      assert(delta("reader.indexReads") <= listener.mapTasks * executors,
        s"index READs ${delta("reader.indexReads")} for ${listener.mapTasks} map outputs " +
          s"and $executors executors")
      // A fetch whose indexes were all cached is at most one round trip; any other at most two.
      assert(delta("reader.cachedFetchRoundTrips") <= delta("reader.cachedFetches"))
      assert(delta("reader.roundTrips") <= 2 * delta("reader.fetches"))
      assert(delta("transport.readsServed") ==
        delta("reader.indexReads") + delta("reader.dataReads"))
      assert(delta("transport.readsRefused") == 0)
      assert(delta("transport.bytesServed") >= listener.remoteBytes)
    }
  }

  test("AQE really split the skewed join") {
    val big = spark.range(0, 60000, 1, 6).selectExpr(
      "case when id % 10 < 8 then 0 else id % 200 end as k", "id as v")
    val small = spark.range(0, 4000, 1, 3).selectExpr("id % 200 as k", "id as w")
    val df = big.join(small, "k")
    df.collect()
    val plan = df.queryExecution.executedPlan.asInstanceOf[AdaptiveSparkPlanExec].finalPhysicalPlan
    assert(plan.collect { case j: SortMergeJoinExec if j.isSkewJoin => j }.nonEmpty, plan)
  }

  test("metadata: one table fetch per reducer executor and shuffle, not per block") {
    val before = clusterTotals()
    spark.sparkContext.parallelize(1 to 20000, 8).map(i => (i % 400, i)).reduceByKey(_ + _, 40)
      .count()
    val after = clusterTotals()
    val fetches = after("metadata.tableFetches") - before.getOrElse("metadata.tableFetches", 0L)
    val blocks = after("reader.remoteBlocks") - before.getOrElse("reader.remoteBlocks", 0L)
    assert(blocks >= 40)
    assert(fetches >= 1 && fetches <= 2, s"$fetches table fetches for one shuffle on 2 executors")
  }

  test("unregistering shuffle ids never registered is a no-op on the driver and executors") {
    // Spark's next line calls unregisterShuffle on every shuffle manager for ids it cleans
    // up, also on managers that never registered them.
    val sc = spark.sparkContext
    // Earlier tests' shuffles first: ContextCleaner drops them whenever a GC finds their RDDs
    // gone, which on a busy machine fell inside this test (21 outputs counted, then 13: the
    // previous test's 8 map outputs released meanwhile). Only this test's shuffle is left.
    val tracker = sc.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
    (0 until 1000).filter(tracker.containsShuffle).foreach { id =>
      sc.cleaner.get.doCleanupShuffle(id, blocking = true)
    }
    val rdd = sc.parallelize(1 to 4000, 4).map(i => (i % 40, i.toLong)).reduceByKey(_ + _, 4)
    val expected = rdd.collect().toMap
    // A cleanup ContextCleaner began before the loop (its shuffle already out of the tracker,
    // the executors' release on its way) may still land: wait for this shuffle's 4 alone.
    val deadline = System.nanoTime() + 180L * 1000 * 1000 * 1000
    while (clusterTotals()("registry.outputs") != 4 && System.nanoTime() < deadline) {
      Thread.sleep(200)
    }
    val outputs = clusterTotals()("registry.outputs")
    assert(outputs == 4, s"$outputs outputs registered for this test's 4 map tasks")
    val unknown = 987654
    assert(sc.env.shuffleManager.unregisterShuffle(unknown))
    val onExecutors = sc.parallelize(1 to 8, 8)
      .map(_ => org.apache.spark.SparkEnv.get.shuffleManager.unregisterShuffle(unknown)).collect()
    assert(onExecutors.forall(identity))
    assert(clusterTotals()("registry.outputs") == outputs, "registrations changed")
    assert(rdd.collect().toMap == expected, "the live shuffle must still read the same")
  }

  test("unregistering shuffles releases every registration") {
    spark.sparkContext.parallelize(1 to 1000, 4).map(i => (i % 10, i)).groupByKey(4).count()
    // Drop every shuffle Spark still tracks, the way ContextCleaner does.
    val tracker = spark.sparkContext.env.mapOutputTracker
      .asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
    (0 until 1000).filter(tracker.containsShuffle).foreach { id =>
      spark.sparkContext.cleaner.get.doCleanupShuffle(id, blocking = true)
    }
    val after = clusterTotals()
    assert(after("registry.outputs") == 0)
    assert(after("registry.bytes") == 0)
    assert(after("transport.regionsRegistered") == 0)
    assert(after("transport.bytesRegistered") == 0)
  }
}

class RdmaShuffleJavaSerializerSuite extends RdmaShuffleSuiteBase(None)

class RdmaShuffleKryoSuite
  extends RdmaShuffleSuiteBase(Some("org.apache.spark.serializer.KryoSerializer"))
