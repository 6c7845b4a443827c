/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}

import javax.management.ObjectName
import javax.management.remote.{JMXConnectorFactory, JMXServiceURL}

import com.sun.tools.attach.VirtualMachine
import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * The plugin's counters where operators look, end to end on a local-cluster job: the
 * driver's "rdmaShuffleCluster" source scraped from Spark's PrometheusServlet on the driver
 * UI over HTTP, and each executor JVM's "rdmaShuffle" source read through Spark's JmxSink
 * over a real JMX connection (the Attach API starts the executor's local JMX agent). Names
 * are those docs/metrics.md lists.
 */
class RdmaMetricsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var sc: SparkContext = _

  override def beforeAll(): Unit = {
    val conf = ClusterSupport.rdmaConf("metrics")
      .set("spark.ui.enabled", "true")
      .set("spark.ui.port", "0")
      .set("spark.metrics.conf.*.sink.prometheusServlet.class",
        "org.apache.spark.metrics.sink.PrometheusServlet")
      .set("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
      .set("spark.metrics.conf.executor.sink.jmx.class", "org.apache.spark.metrics.sink.JmxSink")
    sc = new SparkContext(conf)
  }

  override def afterAll(): Unit = if (sc != null) sc.stop()

  /** A shuffle between the two executors; the RDD stays referenced, so outputs stay registered. */
  private lazy val shuffled = {
    val rdd = sc.parallelize(1 to 200000, 8).map(i => (i % 997, i.toLong)).reduceByKey(_ + _, 8)
    assert(rdd.count() === 997)
    rdd
  }

  @volatile private var lastBody = ""

  private def scrape(): Map[String, Double] = {
    val url = sc.uiWebUrl.get + "/metrics/prometheus"
    // Spark's UI answers /metrics/prometheus with a redirect to /metrics/prometheus/.
    val client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build()
    val response = client.send(HttpRequest.newBuilder(URI.create(url)).build(),
      HttpResponse.BodyHandlers.ofString())
    assert(response.statusCode() === 200, s"$url: ${response.statusCode()}")
    val body = response.body()
    lastBody = body
    body.linesIterator.filter(_.contains("rdmaShuffle")).flatMap { line =>
      line.split(" ") match {
        case Array(name, value) => Some(name.replaceAll("\\{.*\\}$", "") -> value.toDouble)
        case _ => None
      }
    }.toMap
  }

  /** A metric of the driver's cluster source in a scrape (counters end in _Count, gauges in
   * _Value: RdmaMetrics defines which is which). */
  private def gauge(m: Map[String, Double], counter: String): Option[Double] =
    m.get(RdmaMetrics.prometheusName(sc.applicationId, "driver", RdmaMetricsSource.CLUSTER,
      RdmaMetrics.byName(counter)))

  test("the driver's PrometheusServlet shows the cluster's counters, nonzero") {
    shuffled
    // Counters that first appear with the executors are registered at the source's first
    // refresh, so they show from the next scrape (at most CLUSTER_MAX_AGE_MS later).
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    var m = scrape()
    // Spark's servlet lists the gauges before the counters, and reading the first gauge
    // ("executors") is what registers the rest: in the scrape that registers them the new
    // counters show, the new gauges only from the next one. Wait for both.
    while ((gauge(m, "reader.remoteBlocks").forall(_ == 0) || gauge(m, "registry.bytes").isEmpty)
        && System.nanoTime() < deadline) {
      Thread.sleep(1000)
      m = scrape()
    }
    assert(gauge(m, "executors") === Some(2.0), lastBody.take(3000))
    for (counter <- Seq("reader.remoteBlocks", "reader.remoteBytes", "reader.dataReads",
        "transport.readsPosted", "transport.bytesRead", "transport.readsServed",
        "transport.regionsRegistered", "transport.bytesRegistered",
        "transport.connectionsOpened", "registry.outputs", "registry.bytes")) {
      assert(gauge(m, counter).exists(_ > 0), s"$counter in\n${m.mkString("\n")}")
    }
    // Present even when zero: failures and fallbacks are what alerts watch.
    for (counter <- Seq("transport.readsFailed", "reader.failedBlocks", "reader.fallbackBlocks")) {
      assert(gauge(m, counter).isDefined, s"$counter in\n${m.mkString("\n")}")
    }
  }

  test("each executor's JmxSink shows its own counters, nonzero") {
    shuffled
    val pids = sc.parallelize(1 to 64, 16)
      .map(_ => SparkEnv.get.executorId -> ProcessHandle.current().pid())
      .distinct().collect().toMap
    assert(pids.size === 2, pids)
    assert(!pids.values.toSeq.contains(ProcessHandle.current().pid()))
    pids.foreach { case (executorId, pid) =>
      val vm = VirtualMachine.attach(pid.toString)
      val values = try {
        val jmx = JMXConnectorFactory.connect(new JMXServiceURL(vm.startLocalManagementAgent()))
        try {
          val server = jmx.getMBeanServerConnection
          server.queryNames(new ObjectName("metrics:*"), null).asScala.toSeq
            .map(n => n.getKeyProperty("name") -> n)
            .filter(_._1.contains(s".$executorId.rdmaShuffle."))
            .map { case (name, n) =>
              name.substring(name.indexOf(".rdmaShuffle.") + ".rdmaShuffle.".length) ->
                // Counters hold their value in "Count", gauges in "Value".
                server.getAttribute(n, if (n.getKeyProperty("type") == "counters") "Count" else "Value")
                  .asInstanceOf[Number].longValue
            }.toMap
        } finally jmx.close()
      } finally vm.detach()
      for (counter <- Seq("transport.readsServed", "transport.bytesServed",
          "transport.regionsRegistered", "transport.bytesRegistered", "registry.bytes")) {
        assert(values.get(counter).exists(_ > 0),
          s"executor $executorId (pid $pid): $counter in $values")
      }
      assert(values.contains("reader.fallbackBlocks"), values)
    }
  }

  // Last: it kills one of the two executors the tests above read from.
  test("the driver's counters do not fall when Spark removes an executor; its gauges do") {
    shuffled
    val counters = Seq("reader.remoteBlocks", "reader.remoteBytes", "reader.dataReads",
      "transport.readsPosted", "transport.bytesRead", "transport.readsServed",
      "transport.bytesServed", "registry.registrations")
    val perExecutor = RdmaShuffleManager.clusterStats().asScala.map { case (e, m) =>
      e -> m.asScala.map { case (k, v) => k -> v.longValue }.toMap }.toMap
    assert(perExecutor.size === 2, perExecutor)
    // The executor whose share of the cluster's reads is the larger: its removal must show.
    val (victim, victimStats) = perExecutor.maxBy(_._2.getOrElse("reader.remoteBlocks", 0L))
    val survivor = (perExecutor.keySet - victim).head
    assert(victimStats.getOrElse("reader.remoteBlocks", 0L) > 0, perExecutor)
    assert(victimStats.getOrElse("registry.bytes", 0L) > 0, perExecutor)

    // The sums the driver exports while both executors live (the source refreshes at most
    // every CLUSTER_MAX_AGE_MS: wait until a scrape shows this snapshot's reads).
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    var before = scrape()
    while (gauge(before, "reader.remoteBlocks").forall(
        _ < perExecutor.values.map(_.getOrElse("reader.remoteBlocks", 0L)).sum)
        && System.nanoTime() < deadline) {
      Thread.sleep(1000)
      before = scrape()
    }
    assert(gauge(before, "executors") === Some(2.0), lastBody.take(3000))

    assert(sc.killExecutor(victim), s"kill executor $victim")
    val removedBy = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (sc.getExecutorIds().contains(victim) && System.nanoTime() < removedBy) {
      Thread.sleep(200)
    }
    assert(!sc.getExecutorIds().contains(victim), s"executor $victim still there")
    ClusterSupport.waitForListeners(sc) // the plugin's ExecutorRemovedListener has run

    // A scrape taken after the removal (the next refresh: executors falls to 1).
    val refreshed = System.nanoTime() + 30L * 1000 * 1000 * 1000
    var after = scrape()
    while (gauge(after, "executors") != Some(1.0) && System.nanoTime() < refreshed) {
      Thread.sleep(1000)
      after = scrape()
    }
    assert(gauge(after, "executors") === Some(1.0), lastBody.take(3000))
    for (counter <- counters) {
      val (b, a) = (gauge(before, counter), gauge(after, counter))
      assert(b.exists(_ > 0) && a.exists(_ >= b.get),
        s"$counter fell from $b to $a when executor $victim was removed " +
          s"(its own: ${victimStats.get(counter)})")
    }
    // Gauges are current values: the removed executor's registered bytes are gone.
    val survivorBytes = RdmaShuffleManager.clusterStats().get(survivor).get("registry.bytes")
    assert(gauge(after, "registry.bytes") === Some(survivorBytes.doubleValue),
      s"registry.bytes after removing $victim (${victimStats("registry.bytes")} of its own)")
  }
}
