/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.File
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.collection.mutable

import org.apache.hadoop.yarn.conf.YarnConfiguration
import org.apache.hadoop.yarn.server.MiniYARNCluster
import org.apache.spark.{FetchFailed, SparkConf, SparkContext, SparkEnv}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListenerExecutorAdded, SparkListenerExecutorRemoved,
  SparkListenerTaskEnd}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.config.RdmaConf
import org.apache.spark.shuffle.rdma.handover.{HandOverClient, ServiceStats}
import org.apache.spark.shuffle.rdma.service.NodeService
import org.apache.spark.shuffle.rdma.service.yarn.{YarnNodeService, YarnServiceKeys}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Issue 26 on YARN, end to end: Hadoop's MiniYARNCluster (one NodeManager, in this JVM) with
 * the node service as the NodeManager's auxiliary service (YarnNodeService, which runs it as a
 * child process), and a real Spark application on it in client mode (the driver in this JVM,
 * the AM and the executors in containers the NodeManager launches), with dynamic allocation
 * and neither the external shuffle service nor shuffle tracking. Every executor of the map
 * stage is released; a second job reads the shuffle from the service alone (no map task
 * re-run, no fetch failure). When the application ends, YARN's stopApplication releases its
 * outputs in the service at once, not one lease later; stopping the NodeManager stops the
 * service process.
 *
 * The driver reaches the socket through a link the test removes before stopping the
 * application, so the driver's own release (RELEASE_APP through the service of its host)
 * finds no socket, as for a driver on a host without a node service; only YARN's
 * stopApplication can release the outputs then. The service's lease is 10 minutes, so that
 * cannot either.
 */
class RdmaYarnSuite extends AnyFunSuite with NodeServiceJobs {
  import ClusterSupport._

  /**
   * On YARN the SparkContext waits for its first executors before it returns
   * (spark.scheduler.minRegisteredResourcesRatio), so those registered before this listener:
   * `seed` adds them. Sets, so an executor seen both ways counts once.
   */
  private class Events extends ShuffleReadListener {
    private val addedIds = mutable.Set[String]()
    private val removedIds = mutable.Set[String]()
    @volatile var fetchFailures = 0
    def seed(ids: Seq[String]): Unit = synchronized { addedIds ++= ids }
    override def onExecutorAdded(e: SparkListenerExecutorAdded): Unit = synchronized {
      addedIds += e.executorId
    }
    override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit = synchronized {
      removedIds += e.executorId
    }
    def added: Int = synchronized(addedIds.size)
    def removed: Int = synchronized(removedIds.size)
    def liveCount: Int = synchronized(addedIds.count(id => !removedIds.contains(id)))
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = {
      super.onTaskEnd(e)
      e.reason match {
        case _: FetchFailed => synchronized(fetchFailures += 1)
        case _ =>
      }
    }
    def resetAll(): Unit = synchronized { reset(); fetchFailures = 0 }
  }

  private def stats(socket: Path): ServiceStats = {
    val c = HandOverClient.connect(socket, 30000)
    try c.stats() finally c.close()
  }

  /** The node service processes under this JVM (the NodeManager's children). */
  private def serviceProcesses(socket: Path): Seq[ProcessHandle] =
    ProcessHandle.current().descendants().iterator().asScala.filter { p =>
      val cmd = p.info().arguments().orElse(Array.empty[String])
      cmd.contains(classOf[NodeService].getName) && cmd.contains(socket.toString)
    }.toSeq

  /** This JVM's class path jars, linked into SPARK_HOME/jars for the service's class path. */
  private def sparkHome(work: Path): Path = {
    val jars = Files.createDirectories(work.resolve("spark-home/jars"))
    sys.props("java.class.path").split(File.pathSeparator).foreach { entry =>
      val p = Paths.get(entry)
      if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
        val link = jars.resolve(p.getFileName)
        if (!Files.exists(link)) Files.createSymbolicLink(link, p.toAbsolutePath)
      }
    }
    work.resolve("spark-home")
  }

  private def yarnConf(work: Path, socket: Path): YarnConfiguration = {
    val c = new YarnConfiguration()
    c.set(YarnConfiguration.NM_AUX_SERVICES, YarnNodeService.NAME)
    c.set(s"yarn.nodemanager.aux-services.${YarnNodeService.NAME}.class",
      classOf[YarnNodeService].getName)
    c.set(YarnServiceKeys.SOCKET, socket.toString)
    c.set(YarnServiceKeys.SPARK_HOME, sparkHome(work).toString)
    c.set(YarnServiceKeys.JAVA_OPTS, "-Xmx256m")
    // Neither lease may release the application: the test shows YARN's stopApplication does.
    c.set(YarnServiceKeys.ARGS, "--transport tcp --host 127.0.0.1 " +
      s"--conf ${RdmaConf.SERVICE_DRIVER_TIMEOUT.key}=10min " +
      s"--conf ${RdmaConf.SERVICE_DRIVER_GONE_TIMEOUT.key}=0")
    c.set(YarnServiceKeys.STOP_TIMEOUT, "30s")
    // As Spark's BaseYarnClusterSuite: hadoop-client-minicluster has no
    // capacity-scheduler.xml, and a full disk must not mark the node unhealthy.
    c.set("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage",
      "100.0")
    c.set("yarn.scheduler.capacity.root.queues", "default")
    c.setInt("yarn.scheduler.capacity.root.default.capacity", 100)
    c.setFloat("yarn.scheduler.capacity.root.default.user-limit-factor", 1)
    c.setInt("yarn.scheduler.capacity.root.default.maximum-capacity", 100)
    c.set("yarn.scheduler.capacity.root.default.state", "RUNNING")
    c.set("yarn.scheduler.capacity.root.default.acl_submit_applications", "*")
    c.set("yarn.scheduler.capacity.root.default.acl_administer_queue", "*")
    c.setInt("yarn.scheduler.capacity.node-locality-delay", -1)
    c.set("yarn.resourcemanager.hostname", "127.0.0.1")
    c.set("yarn.nodemanager.hostname", "127.0.0.1")
    // JVMs reserve far more virtual memory than they use; memory is not what this checks.
    c.setBoolean("yarn.nodemanager.vmem-check-enabled", false)
    c.setBoolean("yarn.nodemanager.pmem-check-enabled", false)
    c.setInt("yarn.scheduler.minimum-allocation-mb", 256)
    c
  }

  private def sparkConf(cluster: MiniYARNCluster, work: Path, appSocket: Path): SparkConf = {
    val fakeSparkJar = Files.createFile(work.resolve("spark.jar"))
    val testClassPath = sys.props("java.class.path")
    val javaHome = sys.props("java.home")
    val conf = new SparkConf()
      .setMaster("yarn")
      .setAppName("rdma-yarn")
      .set("spark.submit.deployMode", "client")
      // Nothing uploaded: the containers run from this JVM's class path (one host).
      .set("spark.yarn.jars", "local:" + fakeSparkJar)
      .set("spark.driver.extraClassPath", testClassPath) // the AM's, in client mode
      .set("spark.executor.extraClassPath", testClassPath)
      .set("spark.yarn.appMasterEnv.JAVA_HOME", javaHome)
      .set("spark.executorEnv.JAVA_HOME", javaHome)
      .set("spark.yarn.stagingDir", work.resolve("staging").toUri.toString)
      .set("spark.yarn.am.memory", "384m")
      .set("spark.executor.memory", "512m")
      .set("spark.executor.cores", "1")
      .set("spark.driver.host", "127.0.0.1")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", RdmaManager)
      .set("spark.shuffle.rdma.transport", "tcp")
      // As on a secured YARN cluster: Spark makes the application's secret; its executors
      // prove it to the service (APP_AUTH), which serves the application on a port of its
      // own, and the NodeManager, which never holds it, still releases it at its end.
      .set("spark.authenticate", "true")
      .set("spark.shuffle.readHostLocalDisk", "false")
      .set(RdmaConf.SERVICE_SOCKET.key, appSocket.toString)
      .set(RdmaShuffleDataIO.PLUGIN_CLASS_KEY, classOf[RdmaShuffleDataIO].getName)
      .set("spark.dynamicAllocation.enabled", "true")
      .set("spark.shuffle.service.enabled", "false")
      .set("spark.dynamicAllocation.shuffleTracking.enabled", "false")
      .set("spark.dynamicAllocation.minExecutors", "0")
      .set("spark.dynamicAllocation.initialExecutors", "2")
      .set("spark.dynamicAllocation.maxExecutors", "2")
      .set("spark.dynamicAllocation.executorIdleTimeout", "3s")
      .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s")
    cluster.getConfig.iterator().asScala.foreach { e =>
      conf.set("spark.hadoop." + e.getKey, e.getValue)
    }
    conf
  }

  test("YARN: executors released by dynamic allocation, the next job reads from the node " +
    "service; the application's end releases its outputs at once; the service stops with " +
    "the NodeManager") {
    assumeFdPass()
    val t0 = System.nanoTime()
    val work = Files.createTempDirectory(Paths.get("/tmp"), "rdma-yarn")
    val real = Files.createDirectories(work.resolve("real"))
    val socket = real.resolve("service.sock")
    val link = Files.createSymbolicLink(work.resolve("via"), real)
    val appSocket = link.resolve("service.sock")
    val cluster = new MiniYARNCluster(classOf[RdmaYarnSuite].getSimpleName, 1, 1, 1)
    var sc: SparkContext = null
    try {
      cluster.init(yarnConf(work, socket))
      cluster.start()
      val rmDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180)
      // MiniYARNCluster may return before the RM's address has its port (as Spark's suite).
      while (cluster.getConfig.get(YarnConfiguration.RM_ADDRESS).split(":").last == "0") {
        assert(System.nanoTime() < rmDeadline, "the ResourceManager did not come up")
        Thread.sleep(100)
      }
      assert(serviceProcesses(socket).size == 1, "the NodeManager started one node service")
      assert(Files.exists(socket))
      println(s"[yarn suite] cluster up in ${(System.nanoTime() - t0) / 1000000} ms")

      sc = new SparkContext(sparkConf(cluster, work, appSocket))
      val appId = sc.applicationId
      assert(appId.startsWith("application_"), appId)
      val events = new Events
      sc.addSparkListener(events)
      events.seed(sc.getExecutorIds())
      val summed = sc.parallelize(1 to Records, MapTasks).map(i => (i % 50, i.toLong))
        .reduceByKey(_ + _, ReducePartitions)

      val (first, writers) = collectWithCounters(summed)
      assert(first == expected)
      waitForListeners(sc)
      assert(events.mapTasks == MapTasks)
      assert(writers("registry.handedOver") > 0, writers)
      assert(writers("registry.notHandedOver") == 0, writers)
      assert(writers("registry.outputs") == 0, "handed over, not registered by the executors")
      val s1 = stats(socket)
      assert(s1.outputs() == MapTasks && s1.handOvers() == MapTasks && s1.refusals() == 0, s1)
      assert(s1.applications() == 1 && s1.registeredBytes() > 0, s1)

      // Every executor released by dynamic allocation (YARN kills their containers).
      waitForListeners(sc)
      assert(events.added > 0)
      waitUntil("every executor released", 120)(
        events.liveCount == 0 && sc.getExecutorIds().isEmpty)
      waitForListeners(sc)
      assert(events.removed == events.added, s"${events.removed} of ${events.added} removed")
      println(s"[yarn suite] ${events.removed} executors released after job 1; service: $s1")

      events.resetAll()
      val (again, readers) = collectWithCounters(summed)
      waitForListeners(sc)
      assert(again == expected)
      assert(events.mapTasks == 0, "no map task re-ran: Spark kept the map statuses")
      assert(events.fetchFailures == 0)
      assert(events.localBlocks == 0, "the executors that wrote the outputs are gone")
      assert(events.remoteBlocks > 0)
      assert(readers("reader.remoteBlocks") == events.remoteBlocks, readers)
      assert(readers("reader.fallbackBlocks") == 0, readers)
      assert(readers("reader.failedBlocks") == 0, readers)
      // The new executors wrote nothing and served nothing: the bytes came from the service.
      assert(readers("transport.readsServed") == 0, readers)
      assert(readers("transport.readsCompleted") > 0, readers)
      assert(stats(socket).outputs() == MapTasks)
      println(s"[yarn suite] job 2: ${events.remoteBlocks} remote blocks " +
        s"(${events.remoteBytes} bytes) read from the service, 0 map tasks, 0 fetch failures")

      // The driver's own release finds no socket from here on: only YARN's can release.
      Files.delete(link)
      val stopped = System.nanoTime()
      sc.stop()
      sc = null
      waitUntil(s"the service released $appId at its end (YARN stopApplication)", 180)(
        stats(socket).outputs() == 0)
      val s2 = stats(socket)
      assert(s2.registeredBytes() == 0 && s2.openDescriptors() == 0 && s2.outputs() == 0 &&
        s2.applications() == 0, s2)
      println(s"[yarn suite] $appId released in the service " +
        s"${(System.nanoTime() - stopped) / 1000000} ms after sc.stop() (lease: 10 min)")

      val service = serviceProcesses(socket)
      cluster.stop()
      waitUntil("the node service stopped with the NodeManager", 180)(service.forall(!_.isAlive))
      assert(!Files.exists(socket), "the service removed its socket")
      println(s"[yarn suite] whole case ${(System.nanoTime() - t0) / 1000000} ms")
    } finally {
      if (sc != null) sc.stop()
      cluster.stop()
      serviceProcesses(socket).foreach(_.destroyForcibly())
      Files.walk(work).sorted(java.util.Comparator.reverseOrder[Path]())
        .forEach(p => Files.deleteIfExists(p))
    }
  }
}
