package org.apache.spark.shuffle.rdma

import java.io.{File, RandomAccessFile}
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{FetchFailed, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * Faults with executors in separate JVMs: the job either completes with the right answer
 * through Spark's fetch-failure and stage-retry path, or fails with a clear error; it never
 * returns wrong data and never hangs (each test has a time limit through Spark's timeouts).
 */
class RdmaFaultSuite extends AnyFunSuite with BeforeAndAfterEach {
  import ClusterSupport._

  private var sc: SparkContext = _
  private val fetchFailures = ArrayBuffer[FetchFailed]()

  private def start(executors: Int, extra: (String, String)*): Unit = {
    val conf = rdmaConf("rdma-faults", executors)
      .set("spark.shuffle.rdma.readTimeout", "5s")
      .set("spark.network.timeout", "30s")
      .set("spark.network.timeoutInterval", "10s")
      .set("spark.executor.heartbeatInterval", "2s")
    extra.foreach { case (k, v) => conf.set(k, v) }
    sc = new SparkContext(conf)
    fetchFailures.clear()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
        case f: FetchFailed => fetchFailures.synchronized(fetchFailures += f)
        case _ =>
      }
    })
  }

  override def afterEach(): Unit = {
    if (sc != null) sc.stop()
    sc = null
  }

  private def expectedSums(n: Int, keys: Int): Map[Int, Long] =
    (1 to n).groupBy(_ % keys).map { case (k, v) => k -> v.map(_.toLong).sum }

  test("an executor killed while reducers read from it: recomputed, correct result") {
    start(3)
    val summed = sc.parallelize(1 to 30000, 6).map(i => (i % 40, i.toLong)).reduceByKey(_ + _, 12)
    summed.count()
    val victim = sc.getExecutorIds().sorted.head
    val finished = new AtomicInteger()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
        if (e.stageAttemptId == 0 && finished.incrementAndGet() == 2) {
          new Thread(() => sc.killExecutor(victim)).start()
        }
    })
    // Slow reducers so the kill lands while blocks are still being read.
    val result = summed.mapPartitions { it => Thread.sleep(700); it }.collect().toMap
    assert(result == expectedSums(30000, 40))
    assert(!sc.getExecutorIds().contains(victim) || fetchFailures.nonEmpty)
  }

  test("a map output file modified under its registration is caught, not returned") {
    start(2, "spark.shuffle.compress" -> "true")
    val summed = sc.parallelize(1 to 30000, 4).map(i => (i % 40, s"value-$i" * 4))
      .groupByKey(6).mapValues(_.map(_.length.toLong).sum)
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
    val expected = (1 to 30000).groupBy(_ % 40).map { case (k, v) =>
      k -> v.map(i => (s"value-$i" * 4).length.toLong).sum
    }
    // Either Spark detects the corruption and recomputes (correct result), or the job fails
    // with a corruption error. Wrong data is the one outcome that must not happen.
    val outcome = scala.util.Try(summed.mapValues(identity).collect().toMap)
    outcome match {
      case scala.util.Success(r) =>
        assert(r == expected)
        assert(fetchFailures.nonEmpty, "corruption must have been detected")
      case scala.util.Failure(e) =>
        assert(Option(e.getMessage).exists(m => m.toLowerCase.contains("corrupt") ||
          m.contains("FetchFailed") || m.contains("Stream is corrupted")), e)
    }
  }

  test("map output files truncated or deleted under their registrations: never wrong data") {
    start(2)
    val summed = sc.parallelize(1 to 30000, 4).map(i => (i % 40, i.toLong)).reduceByKey(_ + _, 6)
    summed.count()
    // On every executor: truncate half of the shuffle data files to a third of their length
    // (registered pages past the new end no longer exist) and delete the others (the mapping
    // keeps the inode; the index files stay, so Spark's own resolver would still find them).
    val touched = sc.parallelize(1 to 20, 20).map { _ =>
      val dbm = SparkEnv.get.blockManager.diskBlockManager
      dbm.getAllFiles().filter(f => f.getName.startsWith("shuffle_") &&
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
    assert(touched > 0)
    val outcome = scala.util.Try(summed.mapValues(identity).collect().toMap)
    outcome match {
      case scala.util.Success(r) => assert(r == expectedSums(30000, 40))
      case scala.util.Failure(e) =>
        val m = String.valueOf(e.getMessage)
        assert(m.contains("FetchFailed") || m.toLowerCase.contains("corrupt") ||
          m.contains("No such file") || m.contains("NoSuchFile"), e)
    }
    // Whatever happened to those reads, the cluster still runs shuffles afterwards.
    val again = sc.parallelize(1 to 5000, 4).map(i => (i % 10, i.toLong)).reduceByKey(_ + _, 4)
      .collect().toMap
    assert(again == expectedSums(5000, 10))
  }

  test("a peer that stops answering times out into a fetch failure, no hang") {
    start(3)
    val summed = sc.parallelize(1 to 20000, 6).map(i => (i % 30, i.toLong)).reduceByKey(_ + _, 6)
    summed.count()
    // Find one executor's pid and freeze it (SIGSTOP): its transport accepts nothing.
    val pids = sc.parallelize(1 to 30, 30).map { _ =>
      (SparkEnv.get.executorId, ProcessHandle.current().pid())
    }.collect().toMap
    val (victim, pid) = pids.toSeq.sortBy(_._1).head
    new ProcessBuilder("kill", "-STOP", pid.toString).start().waitFor()
    try {
      val t0 = System.nanoTime()
      val result = summed.mapValues(identity).collect().toMap
      val seconds = (System.nanoTime() - t0) / 1e9
      assert(result == expectedSums(20000, 30))
      assert(seconds < 120, s"took $seconds s")
    } finally {
      new ProcessBuilder("kill", "-CONT", pid.toString).start().waitFor()
    }
  }
}
