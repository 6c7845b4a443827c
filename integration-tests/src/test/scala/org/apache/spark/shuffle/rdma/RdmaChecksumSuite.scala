/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.RandomAccessFile
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.collection.mutable.ArrayBuffer
import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.spark.{FetchFailed, SparkContext, SparkEnv}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageSubmitted,
  SparkListenerTaskEnd}
import org.apache.spark.shuffle.rdma.reader.ChecksumMismatchException
import org.scalatest.{BeforeAndAfterAll, BeforeAndAfterEach}
import org.scalatest.funsuite.AnyFunSuite

/**
 * spark.shuffle.rdma.verifyChecksums with executors in separate JVMs. Shuffle compression is
 * off in every case, so Spark's codec cannot notice changed bytes: only the plugin's check
 * against the writer's per-partition checksums can. Every case ends with the job's result
 * equal to the same job's under Spark's sort shuffle (computed first, in local mode).
 */
class RdmaChecksumSuite extends AnyFunSuite with BeforeAndAfterAll with BeforeAndAfterEach {
  import ClusterSupport._
  import RdmaChecksumSuite._

  private var sc: SparkContext = _
  private val fetchFailures = ArrayBuffer[FetchFailed]()
  private val submitted = ArrayBuffer[(Int, Boolean)]()
  private var expected: Map[Int, Long] = _

  override def beforeAll(): Unit = {
    val sort = new SparkContext(sortConf("rdma-checksums-expected")
      .set("spark.shuffle.compress", "false"))
    try expected = countA(sort).collect().toMap finally sort.stop()
  }

  override def afterEach(): Unit = {
    if (sc != null) sc.stop()
    sc = null
  }

  private def start(extra: (String, String)*): Unit = {
    val conf = rdmaConf("rdma-checksums", 2)
      .set("spark.shuffle.compress", "false")
      .set("spark.shuffle.rdma.verifyChecksums", "true")
      // Room for several failed attempts of the reduce stage on a loaded machine.
      .set("spark.stage.maxConsecutiveAttempts", "10")
    extra.foreach { case (k, v) => conf.set(k, v) }
    sc = new SparkContext(conf)
    val deadline = System.nanoTime() + 180L * 1000 * 1000 * 1000
    while (sc.getExecutorIds().size < 2) {
      assert(System.nanoTime() < deadline, "2 executors did not register")
      Thread.sleep(20)
    }
    fetchFailures.clear()
    submitted.clear()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
        case f: FetchFailed => fetchFailures.synchronized(fetchFailures += f)
        case _ =>
      }
      override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
        submitted.synchronized(submitted += ((e.stageInfo.attemptNumber(),
          e.stageInfo.shuffleDepId.isDefined)))
    })
  }

  private def mapStageResubmitted: Boolean =
    submitted.synchronized(submitted.exists { case (attempt, isMap) => isMap && attempt > 0 })

  test("a map output overwritten in place, uncompressed: checksum mismatch naming the block, " +
    "recomputed, sort-shuffle result") {
    start()
    val counted = countA(sc)
    assert(counted.collect().toMap == expected)
    val before = clusterTotals()
    assert(before("reader.checksumVerifiedBlocks") > 0, before)
    assert(before("reader.checksumMismatches") == 0, before)
    // Same length, in place, under the live registrations: 16 bytes of a value's run of 'A's
    // in every shuffle data file of one executor become 'B's. The serialized stream stays
    // valid, so without the checksum check the job would silently count fewer 'A's.
    val victim = sc.getExecutorIds().sorted.head
    val touched = overwriteDataFiles(sc, victim)
    assert(touched > 0)
    // The victim's only core is held by a task of another job while the damaged shuffle is
    // read, so every reducer runs on the other executor and meets the damage through the
    // transport (the victim's own reducers would refuse it locally first, before any read).
    val gate = Files.createTempDirectory("rdma-checksum-gate").toFile
    val blocker = Future(hold(sc, victim, gate.getAbsolutePath))
    val result = try {
      val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
      while (!new java.io.File(gate, "holding").exists()) {
        assert(System.nanoTime() < deadline, "no task held the victim's core")
        Thread.sleep(20)
      }
      counted.mapValues(identity).collect().toMap
    } finally {
      Files.createFile(new java.io.File(gate, "go").toPath)
    }
    Await.result(blocker, 120.seconds)
    assert(result == expected)
    waitForListeners(sc)
    // Spark's own missing-location failures (a retried stage's reducer started while outputs
    // were being unregistered) read no block: left out (ClusterSupport.isMissingOutputLocation).
    val failures = blockReadFailures(fetchFailures.synchronized(fetchFailures.toList))
    assert(failures.nonEmpty, "the overwritten bytes must have been detected")
    // Every fetch failure is the plugin's checksum refusal, and names the block Spark failed.
    failures.foreach { f =>
      // FetchFailed's message is the exception as a string: its class, then its message.
      assert(f.message.contains(ChecksumMismatchException.PREFIX), f.message)
      assert(f.message.contains(s"of shuffle ${f.shuffleId}, map ${f.mapId}, reduce " +
        s"partitions [${f.reduceId}, ${f.reduceId + 1})"), f.message)
      assert(f.bmAddress != null && f.bmAddress.executorId == victim, f.bmAddress)
      assert(f.message.contains(s"read from executor $victim:"), f.message)
    }
    assert(mapStageResubmitted, "the damaged outputs must have been recomputed")
    val after = clusterTotals()
    assert(after("reader.checksumMismatches") >= failures.size, after)
    info(s"${failures.size} fetch failures naming executor $victim, all checksum mismatches " +
      "of blocks read through the transport, e.g.: " + failures.head.message.linesIterator
      .find(_.contains(ChecksumMismatchException.PREFIX)).getOrElse(""))
    info(s"reader.checksumMismatches ${after("reader.checksumMismatches")}, verified blocks " +
      s"${after("reader.checksumVerifiedBlocks")} (${after("reader.checksumVerifiedBytes")} B)")
  }

  test("the writer's algorithm is followed: CRC32 checksums verified, none skipped") {
    // CRC32 is accepted on every Spark line (CRC32C only from Spark 4).
    start("spark.shuffle.checksum.algorithm" -> "CRC32")
    assert(countA(sc).collect().toMap == expected)
    val totals = clusterTotals()
    assert(totals("reader.checksumVerifiedBlocks") > 0, totals)
    assert(totals("reader.checksumSkippedBlocks") == 0, totals)
    assert(totals("reader.checksumMismatches") == 0, totals)
  }

  test("outputs written without checksums are read unverified and counted") {
    start("spark.shuffle.checksum.enabled" -> "false")
    assert(countA(sc).collect().toMap == expected)
    val totals = clusterTotals()
    assert(totals("reader.checksumSkippedBlocks") > 0, totals)
    assert(totals("reader.checksumVerifiedBlocks") == 0, totals)
    assert(totals("reader.checksumMismatches") == 0, totals)
  }
}

object RdmaChecksumSuite {
  val Run: String = "A" * 24

  /** Per key, how many 'A's its values hold: changed bytes of a value change the result. */
  def countA(sc: SparkContext): RDD[(Int, Long)] =
    sc.parallelize(1 to 20000, 4).map(i => (i % 40, s"$i:$Run"))
      .groupByKey(6).mapValues(_.map(_.count(_ == 'A').toLong).sum)

  /**
   * A job whose task on executor {@code victim} holds (announcing "holding" in {@code dir})
   * until "go" appears there; its tasks elsewhere end at once.
   */
  def hold(sc: SparkContext, victim: String, dir: String): Long =
    sc.parallelize(1 to 8, 8).map { _ =>
      if (SparkEnv.get.executorId == victim) {
        val holding = new java.io.File(dir, "holding")
        if (holding.createNewFile()) {
          val deadline = System.nanoTime() + 180L * 1000 * 1000 * 1000
          while (!new java.io.File(dir, "go").exists() && System.nanoTime() < deadline) {
            Thread.sleep(20)
          }
        }
      }
      1L
    }.count()

  /** On executor {@code victim}, in each shuffle data file, 16 'A's after its first third
   * become 'B's, once (tasks until one ran there). */
  def overwriteDataFiles(sc: SparkContext, victim: String): Int = {
    var touched = 0
    var tries = 0
    while (touched == 0 && tries < 10) {
      touched = overwriteOnce(sc, victim)
      tries += 1
    }
    touched
  }

  private def overwriteOnce(sc: SparkContext, victim: String): Int =
    sc.parallelize(1 to 20, 20).map { _ =>
      val needle = ("A" * 16).getBytes(StandardCharsets.US_ASCII)
      val dbm = SparkEnv.get.blockManager.diskBlockManager
      val once = new java.io.File(dbm.localDirs.head, "rdma-checksum-damaged")
      if (SparkEnv.get.executorId != victim || !once.createNewFile()) 0
      else dbm.getAllFiles().filter(f => f.getName.startsWith("shuffle_") &&
        f.getName.endsWith(".data")).map { f =>
        val bytes = Files.readAllBytes(f.toPath)
        val at = indexOf(bytes, needle, bytes.length / 3)
        if (at < 0) 0 else {
          val raf = new RandomAccessFile(f, "rw")
          try {
            raf.seek(at)
            raf.write(Array.fill[Byte](needle.length)('B'.toByte))
          } finally raf.close()
          1
        }
      }.sum
    }.collect().sum

  private def indexOf(hay: Array[Byte], needle: Array[Byte], from: Int): Int = {
    var i = from
    while (i <= hay.length - needle.length) {
      var j = 0
      while (j < needle.length && hay(i + j) == needle(j)) j += 1
      if (j == needle.length) return i
      i += 1
    }
    -1
  }
}
