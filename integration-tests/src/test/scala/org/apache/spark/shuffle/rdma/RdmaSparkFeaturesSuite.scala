/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{FetchFailed, MapOutputTrackerMaster, ShuffleDependency, SparkConf, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.scheduler.{ExecutorDecommissionInfo, SparkListener, SparkListenerTaskEnd}
import org.apache.spark.scheduler.cluster.CoarseGrainedSchedulerBackend
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, AdaptiveSparkPlanHelper, AQEShuffleReadExec}
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, SortMergeJoinExec}
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * The Spark features users combine with a shuffle manager, each on a local-cluster under the
 * RDMA shuffle manager (tcp transport), with results checked against values computed here.
 * This is the suite docs/compatibility.md cites, and the one bin/build-all-lines runs on
 * Spark 3.5 (it compiles unchanged against every Spark line).
 */
class RdmaSparkFeaturesSuite extends AnyFunSuite with BeforeAndAfterEach
  with AdaptiveSparkPlanHelper {
  import ClusterSupport._

  private var sc: SparkContext = _
  private var spark: SparkSession = _
  private val fetchFailures = ArrayBuffer[FetchFailed]()
  private val taskEnds = ArrayBuffer[SparkListenerTaskEnd]()

  private def faultTolerantConf(appName: String, executors: Int): SparkConf =
    rdmaConf(appName, executors)
      .set("spark.shuffle.rdma.readTimeout", "5s")
      .set("spark.network.timeout", "30s")
      .set("spark.network.timeoutInterval", "10s")
      .set("spark.executor.heartbeatInterval", "2s")

  private def start(conf: SparkConf): SparkContext = {
    sc = new SparkContext(conf)
    listen()
    sc
  }

  private def listen(): Unit = {
    fetchFailures.clear()
    taskEnds.clear()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = {
        taskEnds.synchronized(taskEnds += e)
        e.reason match {
          case f: FetchFailed => fetchFailures.synchronized(fetchFailures += f)
          case _ =>
        }
      }
    })
  }

  override def afterEach(): Unit = {
    try {
      if (spark != null) spark.stop() else if (sc != null) sc.stop()
      // A test that failed half-way must not leave a context for the next one.
      SparkContext.getActive.foreach(_.stop())
    } finally {
      spark = null
      sc = null
      super.afterEach()
    }
  }

  private def expectedSums(n: Int, keys: Int): Map[Int, Long] =
    (1 to n).groupBy(_ % keys).map { case (k, v) => k -> v.map(_.toLong).sum }

  private def delta(before: Map[String, Long], after: Map[String, Long], k: String): Long =
    after.getOrElse(k, 0L) - before.getOrElse(k, 0L)

  /**
   * Waits for what Spark or the plugin will do, failing only a hang: the deadline is no speed
   * the product promises (three executor JVMs took over 60 s to register at load average 15).
   */
  private def waitUntil(what: String, timeoutMs: Long = 300000)(cond: => Boolean): Unit = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!cond) {
      if (System.currentTimeMillis() > deadline) fail(s"timed out after $timeoutMs ms: $what")
      Thread.sleep(200)
    }
  }

  private def shuffleIdOf(rdd: org.apache.spark.rdd.RDD[_]): Int =
    rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleId

  /** (map index, map id = task attempt id, executor) of every map output Spark tracks. */
  private def mapOutputs(shuffleId: Int): Seq[(Int, Long, String)] = {
    val tracker = sc.env.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster]
    tracker.shuffleStatuses(shuffleId).withMapStatuses { statuses =>
      statuses.toSeq.zipWithIndex.collect { case (s, i) if s != null =>
        (i, s.mapId, s.location.executorId)
      }
    }
  }

  /** Executor id -> pid of its JVM (runs enough tiny tasks to reach every executor). */
  private def executorPids(): Map[String, Long] =
    sc.parallelize(1 to 40, 40).map { _ =>
      Thread.sleep(20)
      (SparkEnv.get.executorId, ProcessHandle.current().pid())
    }.collect().toMap

  private def finalPlan(df: DataFrame): SparkPlan =
    df.queryExecution.executedPlan.asInstanceOf[AdaptiveSparkPlanExec].finalPhysicalPlan

  test("AQE: coalesced partitions, skew-join split and the local shuffle reader") {
    val conf = rdmaConf("rdma-features-aqe")
    ShuffleWorkloads.sqlConf.foreach { case (k, v) => conf.set(k, v) }
    spark = SparkSession.builder().config(conf).getOrCreate()
    sc = spark.sparkContext
    val before = clusterTotals()

    // 1. 200 shuffle partitions coalesced into a few.
    val agg = spark.range(0, 100000, 1, 6).selectExpr("id % 331 as k", "id as v")
      .groupBy("k").agg(org.apache.spark.sql.functions.sum("v"))
    val aggResult = agg.collect().map(r => r.getLong(0) -> r.getLong(1)).toMap
    assert(aggResult == (0L until 100000L).groupBy(_ % 331).map { case (k, v) => k -> v.sum })
    val aggPlan = finalPlan(agg)
    assert(collect(aggPlan) { case r: AQEShuffleReadExec if r.hasCoalescedPartition => r }
      .nonEmpty, aggPlan)

    // 2. Key 0 holds 80% of the big side: its partition is split (skew join).
    val big = spark.range(0, 60000, 1, 6).selectExpr(
      "case when id % 10 < 8 then 0 else id % 200 end as k", "id as v")
    val small = spark.range(0, 4000, 1, 3).selectExpr("id % 200 as k", "id as w")
    val skew = big.join(small, "k").selectExpr("sum(v + w) as s", "count(*) as c")
    val row = skew.collect().head
    // Every key of the small side has 20 rows: w = k + 200 j, j < 20.
    val expected = (0L until 60000L).map { id =>
      val k = if (id % 10 < 8) 0L else id % 200
      (20 * id + 20 * k + 200L * 190, 20L)
    }.reduce((a, b) => (a._1 + b._1, a._2 + b._2))
    assert((row.getLong(0), row.getLong(1)) == expected)
    val skewPlan = finalPlan(skew)
    assert(collect(skewPlan) { case j: SortMergeJoinExec if j.isSkewJoin => j }.nonEmpty, skewPlan)
    assert(collect(skewPlan) { case r: AQEShuffleReadExec if r.hasSkewedPartition => r }.nonEmpty)

    // 3. Planned as a sort-merge join; at runtime the filtered side is tiny, AQE turns the
    // join into a broadcast join and reads the other side's shuffle with the local reader
    // (map ranges instead of reduce partitions: getReader with startMapIndex/endMapIndex).
    spark.conf.set("spark.sql.adaptive.autoBroadcastJoinThreshold", "10MB")
    val fact = spark.range(0, 50000, 1, 6).selectExpr("id % 1000 as k", "id as v")
    val dim = spark.range(0, 1000, 1, 3).selectExpr("id as k", "id * 3 as w").where("k < 50")
    val local = fact.join(dim, "k").selectExpr("sum(v + w) as s", "count(*) as c")
    val localRow = local.collect().head
    val localExpected = (0L until 50000L).filter(_ % 1000 < 50)
      .map(id => (id + 3 * (id % 1000), 1L)).reduce((a, b) => (a._1 + b._1, a._2 + b._2))
    assert((localRow.getLong(0), localRow.getLong(1)) == localExpected)
    val localPlan = finalPlan(local)
    assert(collect(localPlan) { case j: BroadcastHashJoinExec => j }.nonEmpty, localPlan)
    assert(collect(localPlan) { case r: AQEShuffleReadExec if r.isLocalRead => r }.nonEmpty,
      localPlan)

    val after = clusterTotals()
    assert(delta(before, after, "reader.remoteBlocks") > 0, "no block crossed executors")
    assert(delta(before, after, "reader.failedBlocks") == 0)
  }

  test("dynamic allocation with shuffle tracking: holders of live shuffle data are kept, " +
    "a lost one's outputs are recomputed, executors go once the shuffle is cleaned") {
    start(faultTolerantConf("rdma-features-dynalloc", 2)
      .set("spark.dynamicAllocation.enabled", "true")
      .set("spark.dynamicAllocation.shuffleTracking.enabled", "true")
      .set("spark.dynamicAllocation.minExecutors", "0")
      .set("spark.dynamicAllocation.initialExecutors", "2")
      .set("spark.dynamicAllocation.maxExecutors", "2")
      // Long enough that an executor registered a little before the other one is not
      // released as idle before the first job reaches it.
      .set("spark.dynamicAllocation.executorIdleTimeout", "5s")
      .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s"))
    waitUntil("two executors")(sc.getExecutorIds().size == 2)

    val summed = sc.parallelize(1 to 30000, 6).map { i =>
      if (i % 5000 == 1) Thread.sleep(500) // spread the map tasks over both executors
      (i % 40, i.toLong)
    }.reduceByKey(_ + _, 6)
    assert(summed.collect().toMap == expectedSums(30000, 40))
    val shuffleId = shuffleIdOf(summed)
    val holders = mapOutputs(shuffleId).map(_._3).toSet
    assert(holders.size == 2, s"map outputs on $holders only")

    // Idle for longer than the idle timeout: both hold live shuffle data, so both stay.
    Thread.sleep(8000)
    assert(sc.getExecutorIds().toSet == holders, "an executor with live shuffle data was removed")

    // One goes (its JVM killed): its outputs leave the tracker and are recomputed.
    val pids = executorPids()
    val victim = holders.toSeq.sorted.head
    new ProcessBuilder("kill", "-9", pids(victim).toString).start().waitFor()
    waitUntil(s"executor $victim removed")(!sc.getExecutorIds().contains(victim))
    waitUntil("the lost executor's map outputs leave the tracker") {
      !mapOutputs(shuffleId).exists(_._3 == victim)
    }
    taskEnds.synchronized(taskEnds.clear())
    assert(summed.mapValues(identity).collect().toMap == expectedSums(30000, 40))
    waitForListeners(sc)
    val rerunMaps = taskEnds.synchronized(taskEnds.count(_.taskType == "ShuffleMapTask"))
    assert(rerunMaps > 0, "the lost map outputs were not recomputed")

    // Shuffle cleaned: nothing is held any more and every executor goes (minExecutors 0).
    sc.cleaner.get.doCleanupShuffle(shuffleId, blocking = true)
    waitUntil("idle executors removed after the shuffle was cleaned", 300000) {
      sc.getExecutorIds().isEmpty
    }
  }

  test("two attempts of one map task: readers use the committed one only, the other " +
    "attempt's registration is released") {
    start(faultTolerantConf("rdma-features-attempts", 2)
      .set("spark.speculation", "true")
      .set("spark.task.maxFailures", "4"))
    val pairs = sc.parallelize(1 to 20000, 4).mapPartitionsWithIndex { (p, it) =>
      val ctx = TaskContext.get()
      if (p == 0 && ctx.attemptNumber() == 0) {
        // Fails attempt 0 after its output was written, committed, registered and
        // published: the state a speculative attempt that lost the race leaves behind.
        ctx.addTaskCompletionListener[Unit] { _ =>
          throw new IllegalStateException("attempt 0 fails after committing its output")
        }
      }
      it.map(i => (i % 50, i.toLong))
    }
    val summed = pairs.reduceByKey(_ + _, 6)
    val before = clusterTotals()
    assert(summed.collect().toMap == expectedSums(20000, 50))
    waitForListeners(sc)

    val shuffleId = shuffleIdOf(summed)
    val attempts = taskEnds.synchronized(taskEnds.toList)
      .filter(e => e.taskType == "ShuffleMapTask" && e.taskInfo.index == 0)
    val failed = attempts.filter(_.taskInfo.attemptNumber == 0).map(_.taskInfo.taskId)
    val committed = attempts.filter(_.taskInfo.successful).map(_.taskInfo.taskId)
    assert(failed.size == 1 && committed.size == 1, attempts.map(a => (a.taskInfo, a.reason)))
    val tracked = mapOutputs(shuffleId)
    assert(tracked.find(_._1 == 0).map(_._2) == committed.headOption,
      "map index 0 must be the committed attempt's output")
    waitUntil("the failed attempt's registration released", 300000) {
      delta(before, clusterTotals(), "registry.outputs") == 4
    }
    val after = clusterTotals()
    assert(delta(before, after, "reader.failedBlocks") == 0)
    assert(fetchFailures.isEmpty)
  }

  test("executor decommissioning with shuffle block migration: migrated blocks are read " +
    "from where they land, nothing is recomputed") {
    start(faultTolerantConf("rdma-features-decommission", 3)
      .set("spark.decommission.enabled", "true")
      .set("spark.storage.decommission.enabled", "true")
      .set("spark.storage.decommission.shuffleBlocks.enabled", "true")
      .set("spark.storage.decommission.rddBlocks.enabled", "false"))
    waitUntil("three executors")(sc.getExecutorIds().size == 3)
    val summed = sc.parallelize(1 to 30000, 9).map { i =>
      if (i % 3333 == 1) Thread.sleep(300)
      (i % 40, i.toLong)
    }.reduceByKey(_ + _, 9)
    assert(summed.collect().toMap == expectedSums(30000, 40))
    val shuffleId = shuffleIdOf(summed)
    val victim = mapOutputs(shuffleId).map(_._3).distinct.sorted.head

    sc.schedulerBackend.asInstanceOf[CoarseGrainedSchedulerBackend].decommissionExecutor(
      victim, ExecutorDecommissionInfo("test: decommission", None),
      adjustTargetNumExecutors = true)
    waitUntil(s"map outputs of $victim migrated") {
      val outs = mapOutputs(shuffleId)
      outs.size == 9 && !outs.exists(_._3 == victim)
    }
    waitUntil(s"executor $victim gone")(!sc.getExecutorIds().contains(victim))

    val before = clusterTotals()
    taskEnds.synchronized(taskEnds.clear())
    assert(summed.mapValues(identity).collect().toMap == expectedSums(30000, 40))
    waitForListeners(sc)
    val after = clusterTotals()
    assert(fetchFailures.isEmpty, "migrated outputs must be read, not recomputed")
    assert(taskEnds.synchronized(taskEnds.count(_.taskType == "ShuffleMapTask")) == 0)
    // Blocks that moved to the other survivor have no registration there: read through
    // Spark's own block transfer from where they landed.
    assert(delta(before, after, "reader.fallbackBlocks") > 0, after)
    assert(delta(before, after, "reader.failedBlocks") == 0)
  }

  /**
   * Spark's own external shuffle service as a process of its own, as on a real cluster
   * (local-cluster turns the workers' built-in one off). It serves the files of executors
   * whose local dirs lie under `localDir`, which must therefore be the application's
   * `spark.local.dir` too. Returns the process, once its port accepts connections.
   */
  private def startShuffleService(port: Int, localDir: java.io.File): Process = {
    val log = java.io.File.createTempFile("external-shuffle-service", ".log")
    val cmd = Seq(s"${sys.props("java.home")}/bin/java", "-Xmx256m") ++
      org.apache.spark.launcher.JavaModuleOptions.defaultModuleOptions().split(" ")
        .filter(_.nonEmpty) ++
      Seq("-cp", sys.props("java.class.path"),
        s"-Dspark.shuffle.service.port=$port",
        s"-Dspark.local.dir=${localDir.getAbsolutePath}",
        "-Dspark.shuffle.service.db.enabled=false",
        "org.apache.spark.deploy.ExternalShuffleService")
    val pb = new ProcessBuilder(cmd: _*).redirectErrorStream(true)
      .redirectOutput(ProcessBuilder.Redirect.to(log))
    val process = pb.start()
    waitUntil(s"the external shuffle service on port $port (log: $log)", 300000) {
      assert(process.isAlive, s"the external shuffle service exited; log: $log")
      scala.util.Try(new java.net.Socket("127.0.0.1", port).close()).isSuccess
    }
    process
  }

  test("external shuffle service: outputs of a released executor are read from the " +
    "service, nothing is recomputed") {
    val port = { val s = new java.net.ServerSocket(0); try s.getLocalPort finally s.close() }
    val localDir = java.nio.file.Files.createTempDirectory("rdma-ess-local").toFile
    val service = startShuffleService(port, localDir)
    // The local-cluster workers run in this JVM, which caches the local root dirs of the
    // first context: without this the executors get the earlier tests' dirs, outside the
    // service's, and the service refuses to register them.
    org.apache.spark.util.Utils.clearLocalRootDirs()
    try {
      start(faultTolerantConf("rdma-features-ess", 2)
        .set("spark.local.dir", localDir.getAbsolutePath)
        .set("spark.shuffle.service.enabled", "true")
        .set("spark.shuffle.service.port", port.toString)
        .set("spark.dynamicAllocation.enabled", "true")
        .set("spark.dynamicAllocation.shuffleTracking.enabled", "false")
        .set("spark.dynamicAllocation.minExecutors", "1")
        .set("spark.dynamicAllocation.initialExecutors", "2")
        .set("spark.dynamicAllocation.maxExecutors", "2")
        // The test releases the executor itself (below): an idle timer firing while the
        // executors start one after the other, or between the first job's stages on a
        // loaded machine, released one before the shuffle was written or mid-job.
        .set("spark.dynamicAllocation.executorIdleTimeout", "300s")
        .set("spark.executor.cores", "1")
        .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s"))
      waitUntil("two executors")(sc.getExecutorIds().size == 2)
      val summed = sc.parallelize(1 to 30000, 8).map { i =>
        if (i % 3750 == 1) Thread.sleep(400) // spread the map tasks over both executors
        (i % 40, i.toLong)
      }.reduceByKey(_ + _, 6)
      assert(summed.collect().toMap == expectedSums(30000, 40))
      val shuffleId = shuffleIdOf(summed)
      val holders = mapOutputs(shuffleId).map(_._3).toSet
      assert(holders.size == 2, s"map outputs on $holders only")

      // One executor is released the way dynamic allocation releases an idle one (the
      // allocation manager's own call). With the shuffle service Spark keeps its map
      // outputs, now served by the service. The survivor read from it in the first job, so
      // the survivor's reader still holds the released executor's registrations.
      val released = holders.toSeq.sorted.head
      sc.schedulerBackend.asInstanceOf[CoarseGrainedSchedulerBackend].killExecutors(
        Seq(released), adjustTargetNumExecutors = false, countFailures = false, force = false)
      waitUntil(s"executor $released removed")(!sc.getExecutorIds().contains(released))
      waitForListeners(sc)
      assert(mapOutputs(shuffleId).exists(_._3 == released),
        "the shuffle service keeps the released executor's outputs in the tracker")

      val before = clusterTotals()
      taskEnds.synchronized(taskEnds.clear())
      assert(summed.mapValues(identity).collect().toMap == expectedSums(30000, 40))
      waitForListeners(sc)
      val after = clusterTotals()
      val rerunMaps = taskEnds.synchronized(taskEnds.count(_.taskType == "ShuffleMapTask"))
      assert(fetchFailures.isEmpty && rerunMaps == 0, s"${fetchFailures.size} fetch " +
        s"failures, $rerunMaps of 8 map tasks re-run after executor $released was released; " +
        s"counters $after")
      assert(delta(before, after, "reader.fallbackBlocks") > 0, after)
      // The survivor's directory predates the removal: its read there failed, it asked the
      // driver, found the executor gone and read through Spark's client instead.
      assert(delta(before, after, "reader.removedExecutorBlocks") > 0, after)
      assert(delta(before, after, "reader.failedBlocks") == 0, after)
    } finally {
      if (sc != null) { sc.stop(); sc = null }
      org.apache.spark.util.Utils.clearLocalRootDirs()
      service.destroy()
      service.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)
      org.apache.spark.util.Utils.deleteRecursively(localDir)
    }
  }

  test("push-based shuffle is turned off with one warning; the job runs on this manager") {
    val conf = faultTolerantConf("rdma-features-push", 2)
      .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
      .set("spark.shuffle.push.enabled", "true")
      // What lets Spark enable push-based shuffle outside YARN (its own tests use it).
      .set("spark.testing", "true")
    assert(org.apache.spark.util.Utils.isPushBasedShuffleEnabled(conf.clone, isDriver = true),
      "Spark itself would enable push-based shuffle with this configuration")
    start(conf)
    assert(sc.getConf.get("spark.shuffle.push.enabled") == "false")
    val summed = sc.parallelize(1 to 20000, 4).map(i => (i % 50, i.toLong)).reduceByKey(_ + _, 6)
    val before = clusterTotals()
    assert(summed.collect().toMap == expectedSums(20000, 50))
    val dep = summed.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]]
    assert(!dep.shuffleMergeEnabled && !dep.shuffleMergeAllowed)
    assert(delta(before, clusterTotals(), "reader.remoteBlocks") > 0)
  }

  test("spark.shuffle.useOldFetchProtocol=true is refused at startup with the key named") {
    val conf = rdmaConf("rdma-features-old-protocol").set("spark.shuffle.useOldFetchProtocol",
      "true")
    val e = intercept[Throwable](start(conf))
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
      .flatMap(t => Option(t.getMessage)).toList
    assert(messages.exists(_.startsWith("spark.shuffle.useOldFetchProtocol=true is not " +
      "supported by org.apache.spark.shuffle.rdma.RdmaShuffleManager")), messages)
    sc = null
  }
}
