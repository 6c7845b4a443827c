/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.{BufferedReader, File, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import org.apache.spark.shuffle.rdma.handover.{HandOverClient, ServiceStats}
import org.apache.spark.shuffle.rdma.service.NodeService

/**
 * The node service as its own JVM, started as operators start it: bin/shuffle-rdma-service
 * with SPARK_HOME's jars/ linking this test's class path and SHUFFLE_RDMA_JAR at the plugin
 * classes under test. Its socket lives in a short /tmp directory (a Unix socket path has at
 * most 107 bytes).
 */
final class NodeServiceProcess private (val process: Process, val socket: Path, val pid: Long,
    lines: LinkedBlockingQueue[String], work: Path, val args: Seq[String]) {

  /** The service's gauges, through a connection of their own. */
  def stats(): ServiceStats = {
    val c = HandOverClient.connect(socket, 30000)
    try c.stats() finally c.close()
  }

  /** SIGKILL: no shutdown hook, nothing released, as when the service crashes. */
  def kill(): Unit = {
    ProcessHandle.of(pid).ifPresent(p => p.destroyForcibly())
    process.destroyForcibly()
    process.waitFor(30, TimeUnit.SECONDS)
  }

  /** SIGTERM, then SIGKILL after 30 s; then its work directory goes. */
  def stop(): Unit = {
    ProcessHandle.of(pid).ifPresent(p => p.destroy())
    if (!process.waitFor(30, TimeUnit.SECONDS)) kill()
    deleteWork()
  }

  /** The socket and the jars/ links (the links, never what they point at). */
  def deleteWork(): Unit = {
    val paths = Files.walk(work)
    try {
      paths.sorted(java.util.Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
    } finally paths.close()
  }

  def awaitLine(text: String, seconds: Int): String = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (System.nanoTime() < deadline) {
      val line = lines.poll(100, TimeUnit.MILLISECONDS)
      if (line != null && line.contains(text)) return line
      if (line == null && !process.isAlive && lines.isEmpty) {
        throw new AssertionError(s"the service exited (${process.exitValue()}) before '$text'")
      }
    }
    throw new AssertionError(s"no '$text' from the service within $seconds s")
  }
}

object NodeServiceProcess {
  /** `args` after --socket, --transport tcp and --host (e.g. --state-dir none). */
  def start(args: String*): NodeServiceProcess =
    start(Files.createTempDirectory(Paths.get("/tmp"), "rdma-ns"), args)

  /**
   * A new service process in `old`'s work directory with `old`'s command line, at the same
   * socket path (the one a dead service left behind is taken over; its state directory,
   * `service.sock.state` beside it, is found again): what a service manager restarting it
   * does.
   */
  def restart(old: NodeServiceProcess): NodeServiceProcess =
    start(old.socket.getParent, old.args)

  private def start(work: Path, args: Seq[String]): NodeServiceProcess = {
    val root = Paths.get(sys.props.getOrElse("project.root", "..")).toAbsolutePath.normalize
    val sparkHome = work.resolve("spark-home")
    val jars = Files.createDirectories(sparkHome.resolve("jars"))
    sys.props("java.class.path").split(File.pathSeparator).foreach { entry =>
      val p = Paths.get(entry)
      if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
        val link = jars.resolve(p.getFileName)
        if (!Files.exists(link)) Files.createSymbolicLink(link, p.toAbsolutePath)
      }
    }
    val socket = work.resolve("service.sock")
    val cmd = Seq(root.resolve("bin/shuffle-rdma-service").toString,
      "--socket", socket.toString, "--transport", "tcp", "--host", "127.0.0.1") ++ args
    val pb = new ProcessBuilder(cmd: _*).redirectErrorStream(true)
    pb.environment().put("SPARK_HOME", sparkHome.toString)
    pb.environment().put("SHUFFLE_RDMA_JAR", Paths.get(classOf[NodeService].getProtectionDomain
      .getCodeSource.getLocation.toURI).toString)
    pb.environment().put("JAVA_HOME", sys.props("java.home"))
    pb.environment().put("SHUFFLE_RDMA_SERVICE_OPTS", "-Xmx256m")
    val process = pb.start()
    val lines = new LinkedBlockingQueue[String]()
    val pump = new Thread(() => {
      val r = new BufferedReader(new InputStreamReader(process.getInputStream,
        StandardCharsets.UTF_8))
      try {
        var line = r.readLine()
        while (line != null) {
          println(s"[service] $line")
          lines.add(line)
          line = r.readLine()
        }
      } catch { case _: java.io.IOException => } // the process ended
    }, "service-stdout")
    pump.setDaemon(true)
    pump.start()
    val probe = new NodeServiceProcess(process, socket, process.pid(), lines, work, args)
    val ready = probe.awaitLine(NodeService.READY, 120)
    val pid = ready.split(" ").find(_.startsWith("pid=")).map(_.stripPrefix("pid=").toLong)
      .getOrElse(process.pid())
    new NodeServiceProcess(process, socket, pid, lines, work, args)
  }
}
