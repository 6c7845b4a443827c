/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.{File, RandomAccessFile}
import java.nio.file.{FileAlreadyExistsException, Files}
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.collection.mutable.ArrayBuffer
import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.spark.{FetchFailed, HashPartitioner, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.shuffle.rdma.reader.ChecksumMismatchException
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorRemoved,
  SparkListenerStageSubmitted, SparkListenerTaskEnd}
import org.scalatest.{BeforeAndAfterAll, BeforeAndAfterEach}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Faults with executors in separate JVMs. Every case must end with the job's result equal to
 * the result of the same job under Spark's sort shuffle (computed first, in local mode); a
 * job that fails fails the test. The cases that promise a fetch failure and a recompute
 * assert that it happened, with the right executor, and for the right reason.
 */
class RdmaFaultSuite extends AnyFunSuite with BeforeAndAfterAll with BeforeAndAfterEach {
  import ClusterSupport._
  import RdmaFaultSuite._

  private var sc: SparkContext = _
  /** (when the listener saw it, in nanoTime; the fetch failure). */
  private val fetchFailures = ArrayBuffer[(Long, FetchFailed)]()
  /** (executor the failed reducer ran on, the fetch failure). */
  private val failedOn = ArrayBuffer[(String, FetchFailed)]()
  /** (when, executor id) of every executor removal. */
  private val removals = ArrayBuffer[(Long, String)]()
  /** (stage id, attempt, is a shuffle map stage) of every stage submission. */
  private val submitted = ArrayBuffer[(Int, Int, Boolean)]()
  private var expected: Expected = _

  override def beforeAll(): Unit = {
    val sort = new SparkContext(sortConf("rdma-faults-expected"))
    try {
      expected = Expected(
        killed = partitionedSums(sort, identity),
        lengths = lengths(sort).collect().toMap,
        sums = sums(sort, 30000, 40).collect().toMap,
        small = sums(sort, 5000, 10).collect().toMap,
        frozen = sums(sort, 20000, 30).collect().toMap)
    } finally sort.stop()
  }

  private def start(executors: Int, extra: (String, String)*): Unit = {
    val conf = rdmaConf("rdma-faults", executors)
      .set("spark.shuffle.rdma.readTimeout", "5s")
      .set("spark.network.timeout", "30s")
      .set("spark.network.timeoutInterval", "10s")
      .set("spark.executor.heartbeatInterval", "2s")
      // Several executors may fail in turn (every file on every executor is damaged).
      .set("spark.stage.maxConsecutiveAttempts", "10")
    extra.foreach { case (k, v) => conf.set(k, v) }
    sc = new SparkContext(conf)
    awaitCondition(s"$executors executors registered", 180)(sc.getExecutorIds().size >= executors)
    fetchFailures.clear()
    failedOn.clear()
    removals.clear()
    submitted.clear()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
        case f: FetchFailed => fetchFailures.synchronized {
          fetchFailures += ((System.nanoTime(), f))
          failedOn += ((e.taskInfo.executorId, f))
        }
        case _ =>
      }
      override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit =
        removals.synchronized(removals += ((System.nanoTime(), e.executorId)))
      override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit = submitted.synchronized {
        submitted += ((e.stageInfo.stageId, e.stageInfo.attemptNumber(),
          e.stageInfo.shuffleDepId.isDefined))
      }
    })
  }

  override def afterEach(): Unit = {
    if (sc != null) sc.stop()
    sc = null
  }

  /** Executor id to process id, for every live executor (tasks until each one ran one). */
  private def executorPids(): Map[String, Long] = {
    val ids = sc.getExecutorIds().toSet
    var pids = Map[String, Long]()
    var tries = 0
    while (!ids.subsetOf(pids.keySet) && tries < 10) {
      pids ++= sc.parallelize(1 to 60, 60).map { _ =>
        (SparkEnv.get.executorId, ProcessHandle.current().pid())
      }.collect().toMap
      tries += 1
    }
    pids.filter { case (id, _) => ids.contains(id) }
  }

  private def signal(sig: String, pid: Long): Unit =
    assert(new ProcessBuilder("kill", sig, pid.toString).start().waitFor() == 0, s"kill $sig $pid")

  private def awaitCondition(what: String, seconds: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what")
      Thread.sleep(20)
    }
  }

  /** One executor's plugin counter (0 when it does not report it). */
  private def executorCounter(executor: String, name: String): Long = {
    val stats = RdmaShuffleManager.clusterStats().get(executor)
    assert(stats != null, s"executor $executor reports no counters")
    Option(stats.get(name)).map(_.longValue).getOrElse(0L)
  }

  /** What the fault caused, for the test report (and docs/security.md). */
  private def report(): Unit = {
    val failures = fetchFailures.synchronized(fetchFailures.map(_._2).toList)
    val named = failures.flatMap(f => Option(f.bmAddress).map(_.executorId)).distinct.sorted
    val resubmits = submitted.synchronized(submitted.count { case (_, a, isMap) => isMap && a > 0 })
    info(s"${failures.size} fetch failures naming executors ${named.mkString(",")}; " +
      s"$resubmits map stage resubmissions")
  }

  /** True if a shuffle map stage was submitted again (attempt > 0) after a fetch failure. */
  private def mapStageResubmitted: Boolean =
    submitted.synchronized(submitted.exists { case (_, attempt, isMap) => isMap && attempt > 0 })

  test("an executor killed while reducers read from it: fetch failure, map stage resubmitted, " +
    "sort-shuffle result") {
    // One block per request and one request in flight: a reducer that has read its first
    // record still has most of its remote blocks to fetch.
    start(3, "spark.reducer.maxReqsInFlight" -> "1",
      "spark.reducer.maxBlocksInFlightPerAddress" -> "1")
    val pids = executorPids()
    assert(pids.size == 3, pids)
    val (victim, victimPid) = pids.toSeq.sortBy(_._1).head
    val gate = Files.createTempDirectory("rdma-fault-gate").toFile
    val removed = new CountDownLatch(1)
    sc.addSparkListener(new SparkListener {
      override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit =
        if (e.executorId == victim) removed.countDown()
    })
    val gateDir = gate.getAbsolutePath
    val job = Future(partitionedSums(sc, it => ReadGate.hold(gateDir, it)))
    // Synchronise on the reducers themselves: kill once the reducers on both other
    // executors have started reading (each read its first record and is holding).
    awaitCondition("reducers on two other executors reading", 180) {
      val readers = Option(gate.list()).getOrElse(Array.empty[String])
        .filter(_.startsWith("reading-")).map(_.split("-")(1)).toSet
      (readers - victim).size >= 2
    }
    signal("-KILL", victimPid)
    assert(removed.await(180, TimeUnit.SECONDS), s"executor $victim was not removed")
    Files.createFile(new File(gate, "go").toPath)
    val result = Await.result(job, 300.seconds)
    assert(result == expected.killed)
    waitForListeners(sc)
    val fromVictim = fetchFailures.synchronized(fetchFailures.map(_._2).filter(f =>
      f.bmAddress != null && f.bmAddress.executorId == victim).toList)
    assert(fromVictim.nonEmpty, s"no fetch failure named executor $victim: " +
      fetchFailures.map(_._2.bmAddress))
    assert(mapStageResubmitted, s"the map stage was not resubmitted: $submitted")
    report()
  }

  test("a map output file overwritten under its registration: refused by the checksum check, " +
    "recomputed, sort-shuffle result") {
    // Compressed, so Spark's codec check would notice the garbage too: the assertions below
    // hold only if the plugin's checksum check refused the blocks before the codec saw them.
    start(2, "spark.shuffle.compress" -> "true", "spark.shuffle.rdma.verifyChecksums" -> "true")
    val summed = lengths(sc)
    summed.count()
    // Overwrite the middle of every shuffle data file on every executor, in place: the
    // registered mappings now show the garbage.
    val touched = sc.parallelize(1 to 20, 20).map { _ =>
      val dbm = SparkEnv.get.blockManager.diskBlockManager
      dbm.getAllFiles().filter(f => f.getName.startsWith("shuffle_") &&
        f.getName.endsWith(".data") && f.length() > 64).map { f =>
        val raf = new RandomAccessFile(f, "rw")
        try {
          raf.seek(f.length() / 3)
          raf.write(Array.fill[Byte](48)(0x5a))
        } finally raf.close()
        f.getName
      }.size
    }.collect().sum
    assert(touched > 0)
    val result = summed.mapValues(identity).collect().toMap
    assert(result == expected.lengths)
    waitForListeners(sc)
    // Spark's own missing-location failures of a retried stage's early reducers are left out:
    // they read no block (ClusterSupport.isMissingOutputLocation).
    val failures = blockReadFailures(fetchFailures.synchronized(fetchFailures.map(_._2).toList))
    assert(failures.nonEmpty, "the corruption must have been detected")
    // Each is the plugin's refusal (a block read from a peer or from this executor's own
    // files), naming the block Spark failed; none is the codec's "corrupted" or a lost peer.
    failures.foreach { f =>
      assert(f.message.contains(ChecksumMismatchException.PREFIX), f.message)
      assert(f.message.contains(s"of shuffle ${f.shuffleId}, map ${f.mapId}, reduce " +
        s"partitions [${f.reduceId}, "), f.message)
    }
    val mismatches = clusterTotals()("reader.checksumMismatches")
    assert(mismatches >= failures.size, s"reader.checksumMismatches $mismatches")
    assert(mapStageResubmitted, "the damaged outputs must have been recomputed")
    report()
    info(s"reader.checksumMismatches $mismatches")
  }

  test("map output files truncated or deleted under their registrations: recomputed, " +
    "sort-shuffle result") {
    // Uncompressed: no codec checksum notices a short block, only the plugin's checks do.
    // No locality wait: the first reducers start on both executors at once, so the damaged
    // executor's own reducers meet the local check and the other's the server's check.
    start(2, "spark.shuffle.compress" -> "false", "spark.locality.wait" -> "0",
      "spark.shuffle.reduceLocality.enabled" -> "false")
    val summed = sums(sc, 30000, 40)
    summed.count()
    // On one executor only: truncate half of its shuffle data files to a third of their
    // length (registered pages past the new end no longer exist) and delete the others (the
    // mapping keeps the inode; the index files stay, so Spark's own resolver still finds
    // them). Damaging one executor matters: its reducers then read damaged local blocks next
    // to intact remote ones, so nothing but the plugin's local check stops a block past a
    // truncated end from reading as empty, i.e. a silently smaller sum.
    val victim = sc.getExecutorIds().sorted.head
    var touched = 0
    var tries = 0
    while (touched == 0 && tries < 10) {
      touched = sc.parallelize(1 to 20, 20).map { _ =>
        val dbm = SparkEnv.get.blockManager.diskBlockManager
        val once = new File(dbm.localDirs.head, "rdma-fault-damaged")
        if (SparkEnv.get.executorId != victim || !once.createNewFile()) 0
        else dbm.getAllFiles().filter(f => f.getName.startsWith("shuffle_") &&
          f.getName.endsWith(".data") && f.length() > 64).sortBy(_.getName).zipWithIndex.map {
            case (f, i) =>
              if (i % 2 == 0) {
                val raf = new RandomAccessFile(f, "rw")
                try raf.setLength(f.length() / 3) finally raf.close()
              } else {
                f.delete()
              }
              1
          }.sum
      }.collect().sum
      tries += 1
    }
    assert(touched > 0)
    val refusedBefore = executorCounter(victim, "transport.readsRefused")
    assert(summed.mapValues(identity).collect().toMap == expected.sums)
    waitForListeners(sc)
    val failures = failedOn.synchronized(failedOn.toList).filterNot(f => isMissingOutputLocation(f._2))
    assert(failures.nonEmpty, "the damaged outputs must have surfaced as fetch failures")
    failures.foreach { case (_, f) =>
      assert(f.bmAddress != null && f.bmAddress.executorId == victim, f.bmAddress)
    }
    // The victim's own reducers: refused by the reader's local check, before Spark reads the
    // files (without it a block past a truncated end reads as empty: a smaller sum).
    val (own, others) = failures.partition(_._1 == victim)
    assert(own.nonEmpty, s"no reducer on executor $victim failed: $failures")
    own.foreach { case (_, f) =>
      assert(f.message.contains("local map output changed under its registration"), f.message)
    }
    // The other executor's reducers: the victim's server refused their reads (its backing-file
    // check); a read served past a file's end instead would have failed the connection or the
    // executor, which fail fetches too, but count no refusal.
    assert(others.nonEmpty, s"no reducer elsewhere read from executor $victim: $failures")
    val refused = executorCounter(victim, "transport.readsRefused") - refusedBefore
    assert(refused >= others.size, s"executor $victim refused $refused reads for " +
      s"${others.size} failed reducers")
    assert(removals.synchronized(removals.isEmpty), s"executors removed: $removals")
    assert(mapStageResubmitted, "the damaged outputs must have been recomputed")
    report()
    info(s"${own.size} failed on executor $victim (local check), ${others.size} elsewhere; " +
      s"executor $victim refused $refused reads")
    // The cluster still runs shuffles afterwards.
    assert(sums(sc, 5000, 10).collect().toMap == expected.small)
  }

  test("a frozen peer (SIGSTOP) becomes a fetch failure after readTimeout and one retry, " +
      "not heartbeat loss") {
    val readTimeoutS = 4
    val retryWaitS = 1
    // Spark's retry budget, as for its own client: the first read times out, the retry
    // reconnects (the frozen process's kernel still accepts) and times out again.
    val budgetS = 2 * readTimeoutS + retryWaitS
    // Heartbeat loss could remove the frozen executor only after spark.network.timeout (300 s):
    // a failure before half of that came from the read timeout, however slowly a busy
    // machine launched the reducers (a tighter bound asserted the machine's speed).
    val heartbeatS = 300
    start(3,
      "spark.shuffle.rdma.readTimeout" -> s"${readTimeoutS}s",
      "spark.shuffle.io.maxRetries" -> "1",
      "spark.shuffle.io.retryWait" -> s"${retryWaitS}s",
      // Heartbeat loss could only remove the frozen executor after 300 s.
      "spark.network.timeout" -> s"${heartbeatS}s",
      "spark.network.timeoutInterval" -> "60s",
      "spark.executor.heartbeatInterval" -> "10s",
      // Recompute its outputs elsewhere: the frozen executor would never run them.
      "spark.excludeOnFailure.enabled" -> "true",
      "spark.excludeOnFailure.application.fetchFailure.enabled" -> "true")
    val summed = sums(sc, 20000, 30)
    summed.count()
    val (victim, pid) = executorPids().toSeq.sortBy(_._1).head
    signal("-STOP", pid)
    try {
      val t0 = System.nanoTime()
      val result = summed.mapValues(identity).collect().toMap
      assert(result == expected.frozen)
      waitForListeners(sc)
      val first = fetchFailures.synchronized(fetchFailures.find { case (_, f) =>
        f.bmAddress != null && f.bmAddress.executorId == victim
      })
      assert(first.isDefined, s"no fetch failure named the frozen executor $victim")
      val (at, f) = first.get
      val seconds = (at - t0) / 1e9
      assert(f.message.contains("spark.shuffle.rdma.readTimeout"), f.message)
      assert(seconds >= budgetS && seconds < heartbeatS / 2,
        s"fetch failure after $seconds s (retry budget $budgetS s, heartbeat loss $heartbeatS s)")
      assert(!removals.synchronized(removals.exists { case (when, id) =>
        id == victim && when <= at }), "the executor was removed (heartbeat loss) first")
      assert(mapStageResubmitted)
      report()
      info(f"fetch failure from the frozen peer after $seconds%.1f s (readTimeout $readTimeoutS s, " +
        f"one retry after $retryWaitS s)")
    } finally {
      signal("-CONT", pid)
    }
  }
}

object RdmaFaultSuite {
  case class Expected(killed: Map[Int, Long], lengths: Map[Int, Long], sums: Map[Int, Long],
      small: Map[Int, Long], frozen: Map[Int, Long])

  def sums(sc: SparkContext, n: Int, keys: Int): RDD[(Int, Long)] =
    sc.parallelize(1 to n, 6).map(i => (i % keys, i.toLong)).reduceByKey(_ + _, 6)

  def lengths(sc: SparkContext): RDD[(Int, Long)] =
    sc.parallelize(1 to 30000, 4).map(i => (i % 40, s"value-$i" * 4))
      .groupByKey(6).mapValues(_.map(_.length.toLong).sum)

  /**
   * A shuffle without aggregation (so a reducer streams its blocks one by one), then sums per
   * key inside the reducer; {@code hook} sees the reducer's input first.
   */
  def partitionedSums(sc: SparkContext,
      hook: Iterator[(Int, Long)] => Iterator[(Int, Long)]): Map[Int, Long] =
    sc.parallelize(1 to 60000, 24).map(i => (i % 40, i.toLong))
      .partitionBy(new HashPartitioner(6))
      .mapPartitions { it =>
        val sums = scala.collection.mutable.HashMap[Int, Long]()
        hook(it).foreach { case (k, v) => sums(k) = sums.getOrElse(k, 0L) + v }
        sums.iterator
      }.collect().toMap
}

/**
 * Runs in reducers: after the first record (fetching has begun), announces
 * "reading-<executor>-<partition>" in the gate directory and holds until "go" appears, so the
 * driver can fault an executor while reducers are mid-read. Only the first stage attempt
 * holds; retries run straight through.
 */
object ReadGate {
  def hold(dir: String, it: Iterator[(Int, Long)]): Iterator[(Int, Long)] = {
    val ctx = TaskContext.get()
    val go = new File(dir, "go")
    if (ctx.stageAttemptNumber() != 0 || go.exists()) return it
    val first = if (it.hasNext) Some(it.next()) else None
    try {
      Files.createFile(new File(dir,
        s"reading-${SparkEnv.get.executorId}-${ctx.partitionId()}").toPath)
    } catch {
      case _: FileAlreadyExistsException =>
    }
    val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3)
    while (!go.exists() && System.nanoTime() < deadline) Thread.sleep(20)
    first.iterator ++ it
  }
}
