/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

import org.apache.spark.{MapOutputTrackerMaster, SparkContext}
import org.scalatest.funsuite.AnyFunSuite

/**
 * spark.shuffle.rdma.maxRegisteredBytes on a local-cluster with executors in their own JVMs
 * (tcp transport; the cap is the registry's, the same on verbs): a shuffle several times
 * larger than the cap is served whole, its registered outputs by one-sided reads and the
 * others through Spark's own block transfer service; no executor ever holds more than the
 * cap registered; after the shuffle is cleaned up, new outputs register again.
 */
object RdmaRegistrationCapSuite {
  val Cap: Long = 256L * 1024
  val Maps = 12
  val Reducers = 4

  /** ~96 KiB of incompressible values per map output: the cap holds two per executor. */
  def job(sc: SparkContext): Seq[(Int, Long)] = {
    val reducers = Reducers
    sc.parallelize(0 until Maps, Maps).flatMap { m =>
      val rnd = new java.util.Random(77L + m)
      Iterator.tabulate(96) { i =>
        val v = new Array[Byte](1024)
        rnd.nextBytes(v)
        (i % reducers, v)
      }
    }.groupByKey(reducers).mapValues(_.map(v => java.util.Arrays.hashCode(v).toLong).sum)
      .collect().toSeq.sortBy(_._1)
  }
}

class RdmaRegistrationCapSuite extends AnyFunSuite {
  import ClusterSupport._
  import RdmaRegistrationCapSuite._

  private val cap = Cap
  private val maps = Maps

  private def perExecutor(key: String): Map[String, Long] =
    RdmaShuffleManager.clusterStats().asScala.map { case (e, m) =>
      e -> Option(m.get(key)).map(_.longValue).getOrElse(0L)
    }.toMap

  test("outputs over maxRegisteredBytes are served through Spark's client; the cap holds") {
    val sortSc = new SparkContext(sortConf("cap-sort"))
    val expected = try job(sortSc) finally sortSc.stop()

    val sc = new SparkContext(rdmaConf("cap-rdma")
      .set("spark.shuffle.rdma.maxRegisteredBytes", cap.toString))
    try {
      val listener = new ShuffleReadListener
      sc.addSparkListener(listener)
      val before = clusterTotals()
      val result = job(sc)
      waitForListeners(sc)
      val after = clusterTotals()
      def delta(k: String): Long = after.getOrElse(k, 0L) - before.getOrElse(k, 0L)

      assert(result == expected, "differs from the sort shuffle's result")
      assert(listener.remoteBlocks > 0, "no block crossed executors: the test proves nothing")
      val registered = delta("registry.registrations")
      val overCap = delta("registry.outputsOverCap")
      assert(registered > 0, "no output registered: the cap is too small to test both paths")
      assert(overCap > 0, s"all $registered outputs registered: the cap was never reached")
      assert(registered + overCap == maps, s"registered $registered + over cap $overCap")
      perExecutor("registry.bytes").foreach { case (e, bytes) =>
        assert(bytes <= cap, s"executor $e holds $bytes registered bytes, over the cap $cap")
      }
      // Both paths read blocks, and every remote block went through one of them.
      assert(delta("reader.remoteBlocks") > 0, "no block read one-sidedly")
      assert(delta("reader.fallbackBlocks") > 0, "no block read through Spark's client")
      assert(delta("reader.remoteBlocks") + delta("reader.fallbackBlocks") == listener.remoteBlocks,
        s"plugin ${delta("reader.remoteBlocks")} + fallback ${delta("reader.fallbackBlocks")}" +
          s" != Spark's remote blocks ${listener.remoteBlocks}")
      assert(delta("reader.failedBlocks") == 0)

      // Space freed by cleaning the shuffle up: outputs of the next one register again.
      val tracker = sc.env.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster]
      (0 until 100).filter(tracker.containsShuffle).foreach { id =>
        sc.cleaner.get.doCleanupShuffle(id, blocking = true)
      }
      assert(clusterTotals().getOrElse("registry.bytes", -1L) == 0L)
      val again = clusterTotals()
      assert(job(sc) == expected)
      val registeredAgain = clusterTotals()("registry.registrations") -
        again.getOrElse("registry.registrations", 0L)
      assert(registeredAgain > 0, "nothing registered after the cleanup freed the cap")
    } finally {
      sc.stop()
    }
  }
}
