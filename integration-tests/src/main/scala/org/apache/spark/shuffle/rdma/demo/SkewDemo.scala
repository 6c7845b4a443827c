/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo

import java.util.zip.CRC32

import org.apache.spark.{HashPartitioner, SparkConf, SparkContext}
import org.apache.spark.shuffle.rdma.RdmaShuffleManager
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

/**
 * A skewed shuffle: every map task sends `skewMb` MiB of incompressible records to reduce
 * partition 0 and a few hundred KiB to each other partition, so one block per map is far
 * larger than one read (spark.shuffle.rdma.maxReadSize, or a quarter of the verbs receive
 * pool) and, with spark.network.maxRemoteBlockSizeFetchToMem below it, goes to Spark's
 * download files. Run twice in this driver, Spark's sort shuffle then the RDMA manager;
 * prints the results' comparison and the plugin's counters (reads per block, blocks to disk,
 * reconnects, pinned copied bytes), and exits 1 unless the results are equal, the large
 * blocks were read in pieces and at least one block went to disk.
 *
 * Arguments: [skewMb (default 12)] [reducePartitions (default 4)] [mapTasks (default 2)]
 * Unless set, spark.network.maxRemoteBlockSizeFetchToMem is 1m here.
 */
object SkewDemo {
  val RecordBytes: Int = 64 * 1024

  /** Per reduce partition "p:records:crcSum": independent of record order. */
  def job(sc: SparkContext, skewMb: Int, reducers: Int, maps: Int): Seq[String] = {
    val skewed = skewMb * 1024 * 1024 / RecordBytes
    val small = 4 // records per map for each other partition: 256 KiB
    sc.parallelize(0 until maps, maps).flatMap { m =>
      val rnd = new java.util.Random(1000L + m)
      Iterator.tabulate(skewed + small * (reducers - 1)) { i =>
        val key = if (i < skewed) 0 else 1 + (i - skewed) % (reducers - 1)
        val v = new Array[Byte](RecordBytes)
        rnd.nextBytes(v)
        (key, v)
      }
    }.partitionBy(new HashPartitioner(reducers)).mapPartitionsWithIndex { (p, it) =>
      var n = 0L
      var sum = 0L
      it.foreach { case (_, v) =>
        val crc = new CRC32()
        crc.update(v)
        n += 1
        sum += crc.getValue
      }
      Iterator(s"$p:$n:$sum")
    }.collect().toSeq.sorted
  }

  /** Counters this demo prints (summed over executors). */
  val Counters: Seq[String] = Seq("reader.remoteBlocks", "reader.remoteBytes",
    "reader.indexReads", "reader.dataReads", "reader.blocksToDisk", "reader.failedBlocks",
    "transport.readsPosted", "transport.readsCompleted", "transport.readsFailed",
    "transport.reconnects", "transport.pinnedCopiedBytes", "transport.bytesRegistered")

  private def run(base: SparkConf, manager: String, skewMb: Int, reducers: Int, maps: Int) = {
    val conf = base.clone.setAppName(s"skew-demo-$manager").set("spark.shuffle.manager",
      if (manager == "sort") "sort" else ShuffleDemo.RdmaManager)
    if (manager == "sort") sys.env.get("DEMO_REFERENCE_MASTER").filter(_.nonEmpty)
      .foreach(m => conf.setMaster(m))
    val sc = new SparkContext(conf)
    try {
      val metrics = new ShuffleDemo.Metrics
      sc.addSparkListener(metrics)
      val start = System.nanoTime()
      val result = job(sc, skewMb, reducers, maps)
      val wallMs = (System.nanoTime() - start) / 1000000
      sc.listenerBus.waitUntilEmpty()
      val plugin = if (manager == "sort") Map.empty[String, Map[String, Long]] else
        RdmaShuffleManager.clusterStats().asScala.map { case (e, m) =>
          e -> m.asScala.map { case (k, v) => k -> v.longValue }.toMap
        }.toMap
      (result, metrics, wallMs, plugin)
    } finally {
      sc.stop()
    }
  }

  def main(args: Array[String]): Unit = {
    val skewMb = if (args.length > 0) args(0).toInt else 12
    val reducers = if (args.length > 1) args(1).toInt else 4
    val maps = if (args.length > 2) args(2).toInt else 2
    val base = new SparkConf()
    base.setIfMissing("spark.network.maxRemoteBlockSizeFetchToMem", "1m")
    println(s"== skew demo: $maps maps x $skewMb MiB to partition 0 of $reducers, " +
      s"master ${base.get("spark.master", "?")}, maxRemoteBlockSizeFetchToMem " +
      s"${base.get("spark.network.maxRemoteBlockSizeFetchToMem")}, maxReadSize " +
      s"${base.get("spark.shuffle.rdma.maxReadSize", "default")}, receivePoolSize " +
      s"${base.get("spark.shuffle.rdma.verbs.receivePoolSize", "default")}")

    val (sortResult, _, sortMs, _) = run(base, "sort", skewMb, reducers, maps)
    val (rdmaResult, rdmaM, rdmaMs, plugin) = run(base, "rdma", skewMb, reducers, maps)

    val transports = plugin.values.map(m => if (m.getOrElse("transport.verbs", 0L) == 1L)
      "verbs (RDMA READ)" else "tcp (one-sided reads emulated over TCP)").toSet
    println(s"== RDMA shuffle transport in use: ${transports.mkString(", ")} " +
      s"on ${plugin.size} executors")
    println(s"== wall time: sort $sortMs ms, rdma $rdmaMs ms; remote blocks ${rdmaM.remoteBlocks}" +
      s", remote bytes ${rdmaM.remoteBytes}")
    val total = plugin.values.flatten.groupBy(_._1).map { case (k, vs) => k -> vs.map(_._2).sum }
    Counters.foreach(k => println(f"  plugin $k%-30s ${total.getOrElse(k, 0L)}%14d"))
    val blocks = total.getOrElse("reader.remoteBlocks", 0L)
    val pieces = total.getOrElse("reader.dataReads", 0L)
    println(f"== reads per remote block: ${if (blocks > 0) pieces.toDouble / blocks else 0.0}%.2f" +
      s" (data reads $pieces for $blocks blocks, plus one index read each)")
    val inPieces = blocks > 0 && pieces > blocks
    val toDisk = total.getOrElse("reader.blocksToDisk", 0L)
    println(s"== large blocks read in pieces: $inPieces; blocks streamed to disk: $toDisk")
    val same = sortResult == rdmaResult
    println(s"== correctness: results ${if (same) "EQUAL" else "DIFFER"} " +
      s"(partitions=${rdmaResult.size}, ${rdmaResult.mkString(" ")})")
    val expected = sys.env.get("EXPECT_TRANSPORT").filter(_.nonEmpty)
    val transportOk = expected.forall { want =>
      val verbsFlags = plugin.values.map(_.getOrElse("transport.verbs", 0L))
      plugin.nonEmpty && verbsFlags.forall(_ == (if (want == "verbs") 1L else 0L))
    }
    expected.foreach(w => println(s"== every executor used the $w transport: $transportOk"))
    if (!same || !inPieces || toDisk == 0 || !transportOk) sys.exit(1)
  }
}
