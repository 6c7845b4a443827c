/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.SparkContext
import org.apache.spark.shuffle.rdma.demo.SkewDemo
import org.scalatest.funsuite.AnyFunSuite

/**
 * A skewed partition on a local-cluster of two executor JVMs (tcp transport) whose blocks
 * are many times larger than one read (maxReadSize 64k), cross region boundaries
 * (regionSize 1m) and exceed spark.network.maxRemoteBlockSizeFetchToMem (512k): they are
 * read in pieces and streamed into Spark's download files, the small ones assembled in
 * memory, and the result equals the sort shuffle's.
 */
class RdmaLargeBlockSuite extends AnyFunSuite {
  import ClusterSupport._

  private val skewMb = 6
  private val reducers = 4
  private val maps = 2

  test("a skewed block larger than one read and the in-memory threshold: pieces, to disk") {
    val sortSc = new SparkContext(sortConf("skew-sort"))
    val expected = try SkewDemo.job(sortSc, skewMb, reducers, maps) finally sortSc.stop()

    val conf = rdmaConf("skew-rdma")
      .set("spark.shuffle.rdma.maxReadSize", "64k")
      .set("spark.shuffle.rdma.regionSize", "1m")
      .set("spark.network.maxRemoteBlockSizeFetchToMem", "512k")
    val sc = new SparkContext(conf)
    try {
      val listener = new ShuffleReadListener
      sc.addSparkListener(listener)
      val before = clusterTotals()
      val result = SkewDemo.job(sc, skewMb, reducers, maps)
      waitForListeners(sc)
      val after = clusterTotals()
      def delta(k: String): Long = after.getOrElse(k, 0L) - before.getOrElse(k, 0L)

      assert(result == expected, "differs from the sort shuffle's result")
      assert(result.head.startsWith(s"0:${maps * skewMb * 16}:"), result)
      assert(listener.remoteBlocks > 0, "no block crossed executors: the test proves nothing")
      assert(delta("reader.remoteBlocks") == listener.remoteBlocks)
      assert(delta("reader.remoteBytes") == listener.remoteBytes)
      assert(delta("reader.failedBlocks") == 0)
      // A skewed block of ~6 MiB in 64 KiB reads is ~100 pieces on its own.
      assert(delta("reader.dataReads") > delta("reader.remoteBlocks") + 50,
        s"pieces ${delta("reader.dataReads")} for ${delta("reader.remoteBlocks")} blocks")
      assert(delta("reader.blocksToDisk") > 0, "no block went to Spark's download file")
      assert(delta("reader.blocksToDisk") < delta("reader.remoteBlocks"),
        "the small blocks should have stayed in memory")
      assert(delta("transport.readsServed") ==
        delta("reader.indexReads") + delta("reader.dataReads"))
    } finally {
      sc.stop()
    }
  }
}
