/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession

/**
 * The shuffle jobs every suite runs under both shuffle managers. Each returns its result in
 * a canonical (sorted) form so results of the two managers can be compared with ==.
 */
object ShuffleWorkloads {
  type Workload = SparkSession => Seq[String]

  private def sc(s: SparkSession): SparkContext = s.sparkContext

  val groupByKey: Workload = s =>
    sc(s).parallelize(1 to 20000, 6).map(i => (i % 97, i)).groupByKey(5)
      .map { case (k, vs) => s"$k:${vs.size}:${vs.sum}" }.collect().toSeq.sorted

  val reduceByKey: Workload = s =>
    sc(s).parallelize(1 to 50000, 6).map(i => (s"k${i % 1013}", i.toLong)).reduceByKey(_ + _, 7)
      .map { case (k, v) => s"$k=$v" }.collect().toSeq.sorted

  /** sortByKey's own order is the result: no re-sorting on the driver. */
  val sortByKey: Workload = s =>
    sc(s).parallelize(1 to 30000, 5).map(i => ((i * 7919L) % 100003, i)).sortByKey(true, 6)
      .map { case (k, v) => s"$k/$v" }.collect().toSeq

  val join: Workload = s => {
    val left = sc(s).parallelize(1 to 8000, 4).map(i => (i % 500, s"l$i"))
    val right = sc(s).parallelize(1 to 3000, 3).map(i => (i % 700, s"r$i"))
    left.join(right, 6).map { case (k, (l, r)) => s"$k:$l:$r" }.collect().toSeq.sorted
  }

  /** Keys land in only 3 of 50 partitions: most blocks are empty. */
  val emptyPartitions: Workload = s =>
    sc(s).parallelize(1 to 5000, 4).map(i => (i % 3, 1)).partitionBy(
      new org.apache.spark.HashPartitioner(50)).mapPartitionsWithIndex { (p, it) =>
        Iterator(s"$p:${it.size}")
      }.collect().toSeq.sorted

  /** Records of 2 MiB each, larger than the 1 MiB spark.reducer.maxSizeInFlight set for it. */
  val largeRecords: Workload = s =>
    sc(s).parallelize(1 to 12, 4).map { i =>
      (i % 3, Array.fill[Byte](2 * 1024 * 1024)((i % 120).toByte))
    }.groupByKey(3).map { case (k, arrays) =>
      s"$k:${arrays.size}:${arrays.map(a => a.length.toLong + a(a.length / 2)).sum}"
    }.collect().toSeq.sorted

  val manyPartitions: Workload = s =>
    sc(s).parallelize(1 to 40000, 4).map(i => (i, 1L)).reduceByKey(_ + _, 2000)
      .mapPartitionsWithIndex((p, it) => Iterator((p % 10, it.map(_._2).sum)))
      .reduceByKey(_ + _).collect().toSeq.sorted.map(_.toString)

  /** SQL aggregation: AQE coalesces the 200 shuffle partitions. */
  val sqlAggregate: Workload = s => {
    import s.implicits._
    val df = s.range(0, 100000, 1, 6).selectExpr("id % 331 as k", "id as v")
    df.groupBy($"k").agg(org.apache.spark.sql.functions.sum($"v").as("s"),
      org.apache.spark.sql.functions.count($"v").as("c"))
      .collect().map(r => s"${r.getLong(0)}:${r.getLong(1)}:${r.getLong(2)}").toSeq.sorted
  }

  /** A join where key 0 holds most rows, so AQE splits its partition (skew join). */
  val sqlSkewJoin: Workload = s => {
    val big = s.range(0, 60000, 1, 6).selectExpr(
      "case when id % 10 < 8 then 0 else id % 200 end as k", "id as v")
    val small = s.range(0, 4000, 1, 3).selectExpr("id % 200 as k", "id as w")
    big.join(small, "k").selectExpr("k", "v + w as x")
      .groupBy("k").agg(org.apache.spark.sql.functions.sum("x"), org.apache.spark.sql.functions.count("x"))
      .collect().map(r => s"${r.getLong(0)}:${r.getLong(1)}:${r.getLong(2)}").toSeq.sorted
  }

  val all: Seq[(String, Workload)] = Seq(
    "groupByKey" -> groupByKey,
    "reduceByKey" -> reduceByKey,
    "sortByKey" -> sortByKey,
    "join" -> join,
    "empty partitions" -> emptyPartitions,
    "records larger than maxBytesInFlight" -> largeRecords,
    "2000 reduce partitions" -> manyPartitions,
    "SQL aggregation with AQE coalescing" -> sqlAggregate,
    "SQL skew join split by AQE" -> sqlSkewJoin)

  /** SQL settings both managers run with: AQE on, skew thresholds low enough to split. */
  def sqlConf: Seq[(String, String)] = Seq(
    "spark.sql.adaptive.enabled" -> "true",
    "spark.sql.adaptive.coalescePartitions.enabled" -> "true",
    "spark.sql.adaptive.skewJoin.enabled" -> "true",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor" -> "2",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes" -> "16k",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes" -> "16k",
    "spark.sql.autoBroadcastJoinThreshold" -> "-1",
    "spark.reducer.maxSizeInFlight" -> "1m")
}
