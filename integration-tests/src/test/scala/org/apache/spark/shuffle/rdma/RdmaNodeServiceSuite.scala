/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import scala.collection.mutable

import org.apache.spark.{FetchFailed, ShuffleDependency, SparkConf, SparkContext, SparkEnv,
  TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorAdded,
  SparkListenerExecutorRemoved, SparkListenerTaskEnd}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.config.RdmaConf
import org.scalatest.funsuite.AnyFunSuite

/**
 * Issue 26 part 2, end to end with real processes: the node service in its own JVM
 * (bin/shuffle-rdma-service --transport tcp), a local-cluster application with dynamic
 * allocation and neither the external shuffle service nor shuffle tracking. Every executor
 * of the map stage is released; a second job reads the same shuffle from the service alone,
 * with no map task re-run and no fetch failure. A service killed between the jobs ends in
 * fetch failures and a recompute with the same result. Unregistering the shuffle and
 * stopping the application bring the service's gauges back to 0.
 */
class RdmaNodeServiceSuite extends AnyFunSuite with NodeServiceJobs {
  import ClusterSupport._

  private def conf(name: String, service: NodeServiceProcess): SparkConf =
    rdmaConf(name)
      .set(RdmaConf.SERVICE_SOCKET.key, service.socket.toString)
      .set(RdmaShuffleDataIO.PLUGIN_CLASS_KEY, classOf[RdmaShuffleDataIO].getName)
      .set("spark.executor.cores", "1")
      .set("spark.dynamicAllocation.enabled", "true")
      .set("spark.shuffle.service.enabled", "false")
      .set("spark.dynamicAllocation.shuffleTracking.enabled", "false")
      .set("spark.dynamicAllocation.minExecutors", "0")
      .set("spark.dynamicAllocation.initialExecutors", "2")
      .set("spark.dynamicAllocation.maxExecutors", "2")
      .set("spark.dynamicAllocation.executorIdleTimeout", "5s")
      .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s")

  /** Executors coming and going, map tasks run, fetch failures: what the asserts count. */
  private class Events extends ShuffleReadListener {
    val live = mutable.Set[String]()
    @volatile var added = 0
    @volatile var removed = 0
    @volatile var fetchFailures = 0
    /** Executors every fetch failure named (the block manager it could not read from). */
    val failedFrom = mutable.Set[String]()
    val everAdded = mutable.Set[String]()
    override def onExecutorAdded(e: SparkListenerExecutorAdded): Unit = synchronized {
      live += e.executorId
      everAdded += e.executorId
      added += 1
    }
    override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit = synchronized {
      live -= e.executorId
      removed += 1
    }
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = {
      super.onTaskEnd(e)
      e.reason match {
        case f: FetchFailed => synchronized {
          fetchFailures += 1
          if (f.bmAddress != null) failedFrom += f.bmAddress.executorId
        }
        case _ =>
      }
    }
    def liveCount: Int = synchronized(live.size)
    def resetAll(): Unit = synchronized { reset(); fetchFailures = 0; failedFrom.clear() }
  }

  /**
   * With `failAfterCommit`, map task 0's first attempt fails after its output was committed
   * and handed over: the state a speculative attempt that lost the race leaves behind.
   */
  private def shuffled(sc: SparkContext, failAfterCommit: Boolean = false): RDD[(Int, Long)] =
    sc.parallelize(1 to Records, MapTasks).mapPartitionsWithIndex { (p, it) =>
      val ctx = TaskContext.get()
      if (failAfterCommit && p == 0 && ctx.attemptNumber() == 0) {
        ctx.addTaskCompletionListener[Unit] { _ =>
          throw new IllegalStateException("attempt 0 fails after handing its output over")
        }
      }
      it.map(i => (i % 50, i.toLong))
    }.reduceByKey(_ + _, ReducePartitions)

  private def shuffleId(rdd: RDD[_]): Int =
    rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleId

  /** Job 1 ran: waits until dynamic allocation released every executor it had started. */
  private def awaitAllReleased(sc: SparkContext, events: Events): Int = {
    waitForListeners(sc)
    val started = events.added
    assert(started > 0)
    waitUntil("every executor released", 120)(events.liveCount == 0 && sc.getExecutorIds().isEmpty)
    waitForListeners(sc)
    assert(events.removed == started, s"${events.removed} of $started executors removed")
    // The plugin dropped them from its directory too: no executor answers stats.
    assert(RdmaShuffleManager.clusterStats().isEmpty)
    started
  }

  test("executors released by dynamic allocation: the next job reads their outputs from " +
    "the node service, no map task re-run; cleanup empties the service") {
    assumeFdPass()
    val service = NodeServiceProcess.start()
    var sc: SparkContext = null
    try {
      // With spark.authenticate: the service serves this application on a transport of its
      // own that authenticates the readers with the application's secret.
      sc = new SparkContext(conf("rdma-node-service", service)
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", "node-service-suite-secret")
        .set("spark.task.maxFailures", "4"))
      val events = new Events
      sc.addSparkListener(events)
      val summed = shuffled(sc, failAfterCommit = true)

      val (first, writers) = collectWithCounters(summed)
      assert(first == expected)
      waitForListeners(sc)
      assert(events.mapTasks == MapTasks)
      // Every executor that reduced had handed its map outputs over and registered none.
      assert(writers("registry.handedOver") > 0, writers)
      assert(writers("registry.notHandedOver") == 0, writers)
      assert(writers("registry.outputs") == 0, "handed over, not registered by the executors")
      // MapTasks + 1 hand-overs: the failed attempt's output was handed over too; the driver
      // saw the attempt fail, and its executor released that output alone (RELEASE_OUTPUT).
      waitUntil("the failed attempt's output released in the service", 180)(
        service.stats().outputs() == MapTasks)
      val s1 = service.stats()
      assert(s1.handOvers() == MapTasks + 1 && s1.refusals() == 0, s1)
      // The executors named this driver to the service: the lease that ends the outputs.
      service.awaitLine(s"application ${sc.applicationId}: driver at " +
        s"${sc.getConf.get("spark.driver.host")}:${sc.getConf.get("spark.driver.port")};", 10)
      service.awaitLine(s"application ${sc.applicationId} authenticates: its outputs are " +
        "served on tcp", 10)
      service.awaitLine(s"(its task attempt ended without success): 1 outputs", 10)
      assert(s1.registeredBytes() > 0 && s1.openDescriptors() >= 2 * MapTasks, s1)

      val released = awaitAllReleased(sc, events)
      println(s"[node service suite] $released executors released after job 1; service: $s1")

      events.resetAll()
      val t0 = System.nanoTime()
      val (again, readers) = collectWithCounters(summed)
      val job2Ms = (System.nanoTime() - t0) / 1000000
      waitForListeners(sc)
      assert(again == expected)
      assert(events.mapTasks == 0, "no map task re-ran: Spark kept the map statuses")
      assert(events.fetchFailures == 0)
      assert(events.localBlocks == 0, "the executors that wrote the outputs are gone")
      assert(events.remoteBlocks > 0)
      assert(readers("reader.remoteBlocks") == events.remoteBlocks, readers)
      assert(readers("reader.fallbackBlocks") == 0, readers)
      assert(readers("reader.failedBlocks") == 0, readers)
      // Nobody read from the new executors (they wrote nothing): the bytes came from the service.
      assert(readers("transport.readsServed") == 0, readers)
      assert(readers("transport.readsCompleted") > 0, readers)
      println(s"[node service suite] job 2 ($job2Ms ms, executors started for it): " +
        s"${events.remoteBlocks} remote blocks (${events.remoteBytes} bytes) read from the " +
        s"service, 0 map tasks, 0 fetch failures")

      // Unregistering the shuffle (Spark's cleaner) releases it in the service.
      sc.cleaner.get.doCleanupShuffle(shuffleId(summed), blocking = true)
      waitUntil("the service released shuffle " + shuffleId(summed), 180)(
        service.stats().outputs() == 0)
      val s2 = service.stats()
      assert(s2.registeredBytes() == 0 && s2.openDescriptors() == 0 && s2.outputs() == 0, s2)

      // The application's end releases what is left (a shuffle never unregistered).
      assert(shuffled(sc).count() == 50)
      assert(service.stats().outputs() == MapTasks)
      sc.stop()
      sc = null
      val s3 = service.stats()
      assert(s3.registeredBytes() == 0 && s3.openDescriptors() == 0 && s3.outputs() == 0 &&
        s3.applications() == 0, s3)
    } finally {
      if (sc != null) sc.stop()
      service.stop()
    }
  }

  test("the node service killed between the jobs: fetch failures naming the released " +
    "executors, the map stage re-runs, same result; restarted, it serves the next application") {
    assumeFdPass()
    // A service that keeps no state (the next case keeps it): its outputs die with it.
    var service = NodeServiceProcess.start("--state-dir", "none")
    var sc: SparkContext = null
    try {
      sc = new SparkContext(conf("rdma-node-service-killed", service))
      val events = new Events
      sc.addSparkListener(events)
      val summed = shuffled(sc)
      assert(summed.collect().toMap == expected)
      awaitAllReleased(sc, events)
      assert(service.stats().outputs() == MapTasks)
      val job1Executors = events.synchronized(events.everAdded.toSet)

      service.kill()
      events.resetAll()
      val t0 = System.nanoTime()
      assert(summed.collect().toMap == expected)
      val job2Ms = (System.nanoTime() - t0) / 1000000
      waitForListeners(sc)
      assert(events.fetchFailures > 0, "reads of the dead service's outputs must fail")
      val named = events.synchronized(events.failedFrom.toSet)
      // Spark unregisters the outputs of the executor a fetch failure names: it must be the
      // released one that handed them over (the service is not an executor Spark knows).
      assert(named.nonEmpty && named.subsetOf(job1Executors),
        s"fetch failures named $named, the released executors were $job1Executors")
      assert(events.mapTasks > 0, "the lost outputs are recomputed")
      println(s"[node service suite] service killed: job 2 $job2Ms ms, " +
        s"${events.fetchFailures} fetch failures naming executors ${named.mkString(",")} " +
        s"(job 1 ran on ${job1Executors.mkString(",")}), ${events.mapTasks} map tasks re-run")
      sc.stop()
      sc = null

      // Restarted at the same socket: the next application hands over and is served.
      service = NodeServiceProcess.restart(service)
      assert(service.stats().outputs() == 0)
      sc = new SparkContext(conf("rdma-node-service-restarted", service))
      val next = new Events
      sc.addSparkListener(next)
      val again = shuffled(sc)
      assert(again.collect().toMap == expected)
      assert(service.stats().outputs() == MapTasks, service.stats())
      awaitAllReleased(sc, next)
      next.resetAll()
      val (rows, counters) = collectWithCounters(again)
      waitForListeners(sc)
      assert(rows == expected)
      assert(next.mapTasks == 0 && next.fetchFailures == 0,
        s"${next.mapTasks} map tasks, ${next.fetchFailures} fetch failures after the restart")
      assert(counters.getOrElse("reader.remoteBlocks", 0L) > 0 &&
        counters.getOrElse("reader.fallbackBlocks", -1L) == 0, counters)
      println(s"[node service suite] restarted service: the next application's outputs " +
        s"handed over (${MapTasks}) and read back from it after its executors left")
    } finally {
      if (sc != null) sc.stop()
      service.kill()
      service.deleteWork()
    }
  }

  test("the node service SIGKILLed and started again with the same command line after " +
    "every executor left: the next job reads the same shuffle from it, no map task re-run, " +
    "no fetch failure") {
    assumeFdPass()
    var service = NodeServiceProcess.start()
    var sc: SparkContext = null
    try {
      sc = new SparkContext(conf("rdma-node-service-durable", service))
      val events = new Events
      sc.addSparkListener(events)
      val summed = shuffled(sc)
      assert(summed.collect().toMap == expected)
      awaitAllReleased(sc, events)
      val before = service.stats()
      assert(before.outputs() == MapTasks, before)

      service.kill()
      val t0 = System.nanoTime()
      service = NodeServiceProcess.restart(service)
      val restartMs = (System.nanoTime() - t0) / 1000000
      val after = service.stats()
      assert(after.outputs() == MapTasks && after.registeredBytes() == before.registeredBytes(),
        s"restored $after, before the kill $before")

      events.resetAll()
      val (again, readers) = collectWithCounters(summed)
      waitForListeners(sc)
      assert(again == expected, "equal to the result computed without any shuffle service")
      assert(events.fetchFailures == 0, s"${events.fetchFailures} fetch failures")
      assert(events.mapTasks == 0, s"${events.mapTasks} map tasks re-ran")
      assert(events.remoteBlocks > 0)
      assert(readers("reader.remoteBlocks") == events.remoteBlocks, readers)
      assert(readers("reader.fallbackBlocks") == 0 && readers("reader.failedBlocks") == 0,
        readers)
      assert(readers("transport.readsServed") == 0, readers)
      println(s"[node service suite] service SIGKILLed and restarted ($restartMs ms to its " +
        s"ready line, ${after.outputs()} outputs restored): job 2 read " +
        s"${events.remoteBlocks} blocks from it, 0 map tasks, 0 fetch failures")
      sc.stop()
      sc = null
      val s3 = service.stats()
      assert(s3.outputs() == 0 && s3.applications() == 0, s3)
    } finally {
      if (sc != null) sc.stop()
      service.kill()
      service.deleteWork()
    }
  }
}
