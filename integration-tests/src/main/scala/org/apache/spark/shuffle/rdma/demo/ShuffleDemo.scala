/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageCompleted, SparkListenerTaskEnd}
import org.apache.spark.shuffle.rdma.RdmaShuffleManager
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._

/**
 * The README's main job: one shuffle-heavy job run twice in this driver, first with Spark's
 * built-in sort shuffle and then with the RDMA shuffle manager, on whatever master
 * spark-submit gave (the README uses local-cluster, executors in their own JVMs). Prints the
 * transport in use, checks both results are equal, and prints both runs' shuffle metrics.
 *
 * Arguments: [records] [reducePartitions]
 */
object ShuffleDemo {
  val RdmaManager = "org.apache.spark.shuffle.rdma.RdmaShuffleManager"

  final class Metrics extends SparkListener {
    @volatile var remoteBlocks, localBlocks, remoteBytes, localBytes, records, fetchWaitMs,
      shuffleWriteBytes, readStageMs = 0L
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = synchronized {
      Option(e.taskMetrics).foreach { m =>
        val r = m.shuffleReadMetrics
        remoteBlocks += r.remoteBlocksFetched; localBlocks += r.localBlocksFetched
        remoteBytes += r.remoteBytesRead; localBytes += r.localBytesRead
        records += r.recordsRead; fetchWaitMs += r.fetchWaitTime
        shuffleWriteBytes += m.shuffleWriteMetrics.bytesWritten
      }
    }
    override def onStageCompleted(e: SparkListenerStageCompleted): Unit = synchronized {
      val i = e.stageInfo
      if (i.taskMetrics != null && i.taskMetrics.shuffleReadMetrics.recordsRead > 0) {
        readStageMs += i.completionTime.getOrElse(0L) - i.submissionTime.getOrElse(0L)
      }
    }
  }

  /** The job: random records through repartition, reduceByKey, groupByKey and a sort. */
  def job(sc: SparkContext, records: Int, partitions: Int): (Long, Long, Seq[String]) = {
    val data = sc.parallelize(0 until records, 8).map { i =>
      val k = (i * 2654435761L) % 100003
      (k, ("v" * (i % 64)) + i)
    }
    val repartitioned = data.repartition(partitions)
    val reduced = repartitioned.mapValues(_.length.toLong).reduceByKey(_ + _, partitions)
    val grouped = repartitioned.map { case (k, v) => (k % 997, v.length) }.groupByKey(partitions)
      .mapValues(vs => (vs.size, vs.sum))
    val sorted = reduced.sortByKey(ascending = true, partitions)
    val checksum = sorted.map { case (k, v) => k * 31 + v }.reduce(_ + _)
    val groups = grouped.map { case (k, (n, s)) => s"$k:$n:$s" }.collect().sorted.toSeq
    (sorted.count(), checksum, groups)
  }

  private def run(base: SparkConf, manager: String, records: Int, partitions: Int) = {
    val conf = base.clone.setAppName(s"shuffle-demo-$manager").set("spark.shuffle.manager",
      if (manager == "sort") "sort" else RdmaManager)
    // DEMO_REFERENCE_MASTER (e.g. local[2]) runs the sort-shuffle reference in the driver
    // alone: the Soft-RoCE guest uses it because executor JVMs start slowly under emulation.
    if (manager == "sort") sys.env.get("DEMO_REFERENCE_MASTER").filter(_.nonEmpty)
      .foreach(m => conf.setMaster(m))
    val sc = new SparkContext(conf)
    try {
      val metrics = new Metrics
      sc.addSparkListener(metrics)
      val start = System.nanoTime()
      val result = job(sc, records, partitions)
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
    val records = if (args.length > 0) args(0).toInt else 1000000
    val partitions = if (args.length > 1) args(1).toInt else 16
    val base = new SparkConf()
    println(s"== shuffle demo: $records records, $partitions reduce partitions, " +
      s"master ${base.get("spark.master", "?")}" +
      sys.env.get("DEMO_REFERENCE_MASTER").filter(_.nonEmpty)
        .map(m => s" (sort reference on $m)").getOrElse(""))

    val (sortResult, sortM, sortMs, _) = run(base, "sort", records, partitions)
    val (rdmaResult, rdmaM, rdmaMs, plugin) = run(base, "rdma", records, partitions)

    val transports = plugin.values.map(m => if (m.getOrElse("transport.verbs", 0L) == 1L)
      "verbs (RDMA READ)" else "tcp (one-sided reads emulated over TCP)").toSet
    println(s"== RDMA shuffle transport in use: ${transports.mkString(", ")} " +
      s"on ${plugin.size} executors")
    def row(name: String, s: Long, r: Long): String = f"$name%-28s $s%16d $r%16d"
    println(f"${"metric"}%-28s ${"sort (built-in)"}%16s ${"rdma"}%16s")
    println(row("job wall time (ms)", sortMs, rdmaMs))
    println(row("shuffle-read stages (ms)", sortM.readStageMs, rdmaM.readStageMs))
    println(row("shuffle bytes written", sortM.shuffleWriteBytes, rdmaM.shuffleWriteBytes))
    println(row("remote blocks fetched", sortM.remoteBlocks, rdmaM.remoteBlocks))
    println(row("remote bytes read", sortM.remoteBytes, rdmaM.remoteBytes))
    println(row("local blocks fetched", sortM.localBlocks, rdmaM.localBlocks))
    println(row("records read", sortM.records, rdmaM.records))
    println(row("fetch wait (ms)", sortM.fetchWaitMs, rdmaM.fetchWaitMs))
    val total = plugin.values.flatten.groupBy(_._1).map { case (k, vs) => k -> vs.map(_._2).sum }
    Seq("reader.remoteBlocks", "reader.indexReads", "reader.dataReads", "reader.coalescedBlocks",
      "reader.fetches", "reader.roundTrips", "reader.cachedFetches",
      "reader.cachedFetchRoundTrips", "transport.readsPosted",
      "transport.readsCompleted", "transport.bytesRead", "transport.readsServed",
      "transport.bytesServed", "transport.readsRefused", "metadata.tableFetches")
      .foreach(k => println(f"  plugin $k%-30s ${total.getOrElse(k, 0L)}%14d"))

    val reads = ReadFigures(total)
    println(f"== READs per remote block: ${reads.readsPerBlock}%.3f (index ${reads.index} + " +
      f"data ${reads.data} READs for ${reads.blocks} blocks); round trips per fetch: " +
      f"${reads.roundTripsPerFetch}%.3f (${reads.fetches} fetches), per fully cached fetch: " +
      f"${reads.roundTripsPerCachedFetch}%.3f (${reads.cachedFetches} fetches)")

    val same = sortResult == rdmaResult
    println(s"== correctness: results ${if (same) "EQUAL" else "DIFFER"} " +
      s"(rows=${rdmaResult._1}, checksum=${rdmaResult._2}, groups=${rdmaResult._3.size})")
    val throughPlugin = rdmaM.remoteBlocks > 0 && total.getOrElse("reader.remoteBlocks", -1L) ==
      rdmaM.remoteBlocks
    println(s"== every remote block went through the plugin's transport: $throughPlugin")
    // EXPECT_TRANSPORT=verbs (the Soft-RoCE job) fails the run unless every executor used it.
    val expected = sys.env.get("EXPECT_TRANSPORT").filter(_.nonEmpty)
    val transportOk = expected.forall { want =>
      val verbsFlags = plugin.values.map(_.getOrElse("transport.verbs", 0L))
      plugin.nonEmpty && verbsFlags.forall(_ == (if (want == "verbs") 1L else 0L))
    }
    expected.foreach(w => println(s"== every executor used the $w transport: $transportOk"))
    if (!same || !throughPlugin || !transportOk) sys.exit(1)
  }
}
