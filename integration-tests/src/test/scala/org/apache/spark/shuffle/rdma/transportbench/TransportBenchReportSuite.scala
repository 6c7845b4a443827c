/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench

import java.util.{Arrays => JArrays}

import org.apache.spark.shuffle.rdma.bench.TransportReport
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.scalatest.funsuite.AnyFunSuite

/** The transport benchmark's /proc parsing and its report (the verbs column included). */
class TransportBenchReportSuite extends AnyFunSuite {

  test("a stat line's CPU fields, with a thread name holding spaces and parentheses") {
    // pid (comm) state ppid ... utime(14) stime(15) ...
    val line = "4242 (C2 Compiler) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 " +
      "250 37 0 0 20 0 30 0 12345 1000000 200 18446744073709551615"
    val cpu = ProcStat.parse(line)
    assert(cpu(1) == 2.50 && cpu(2) == 0.37)
    assert(math.abs(cpu(0) - 2.87) < 1e-9)
    assert(ProcStat.comm(line) == "C2 Compiler) (x)")
  }

  test("per-thread deltas keep only threads that used CPU, largest first") {
    val before = Map("main/1" -> 1.0, "GC/2" -> 0.5).map { case (k, v) => k -> Double.box(v) }
    val after = Map("main/1" -> 1.0, "GC/2" -> 0.75, "new/3" -> 0.25)
      .map { case (k, v) => k -> Double.box(v) }
    val d = ProcStat.delta(before.asJava, after.asJava)
    assert(d.keySet.asScala == Set("GC/2", "new/3"))
    assert(ProcStat.describe(d) == "GC/2=0.25, new/3=0.25" ||
      ProcStat.describe(d) == "new/3=0.25, GC/2=0.25")
    assert(ProcStat.describe(new java.util.TreeMap[String, java.lang.Double]()) == "none")
    // A live process's own figures parse (this JVM).
    val pid = ProcessHandle.current().pid()
    assert(ProcStat.cpuSeconds(pid) > 0)
    assert(!ProcStat.threadCpuSeconds(pid).isEmpty)
  }

  test("modes tcp and verbs name their transport; plugin takes the default") {
    assert(TransportBench.transportOf("verbs", "tcp") == "verbs")
    assert(TransportBench.transportOf("tcp", "verbs") == "tcp")
    assert(TransportBench.transportOf("plugin", "verbs") == "verbs")
  }

  test("the report has a verbs row with server CPU per GB and per block, and verbs / tcp") {
    val csv = JArrays.asList(
      "rep,mode,size,blocks,bytes,seconds,clientCpuS,serverCpuS,requests",
      "1,spark,4096,1000,4096000,2.0,1.0,0.50,1001",
      "1,tcp,4096,1000,4096000,1.0,1.0,0.25,1000",
      "1,verbs,4096,1000,4096000,0.5,0.5,0.01,1000")
    val md = TransportReport.markdown(TransportReport.bySize(csv), "tcp", "1.0", "2.0",
      "both JVMs in one guest")
    val verbsRow = md.linesIterator.find(_.startsWith("| 4 KiB | plugin (verbs) |")).get
    // 1000 blocks in 0.5 s = 2000/s (4x spark); 0.01 s / 0.004096 GB = 2.44 s/GB (0.02x);
    // 0.01 s / 1000 blocks = 10 us per block (0.02x spark's 500 us).
    assert(verbsRow.contains("| 2000 (4.00x) |"), verbsRow)
    assert(verbsRow.contains("| 2.44 (0.02x) |"), verbsRow)
    assert(verbsRow.contains("| 10.0 (0.02x) |"), verbsRow)
    assert(md.contains("| 4 KiB | plugin (tcp) | 1000 (2.00x) |"), md)
    assert(md.contains("verbs / tcp"), md)
    assert(md.contains("| 4 KiB | 2.00x | 2.00x | 0.50x | 0.04x |"), md)
    assert(md.contains("both JVMs in one guest"))
  }

  test("the floor row is labelled as no product and kept out of the transports named") {
    val csv = JArrays.asList(
      "rep,mode,size,blocks,bytes,seconds,clientCpuS,serverCpuS,requests",
      "1,spark,65536,1000,65536000,1.0,1.0,0.50,1001",
      "1,plugin,65536,1000,65536000,1.0,1.0,0.40,1000",
      "1,floor,65536,1000,65536000,1.0,0.5,0.25,10")
    val md = TransportReport.markdown(TransportReport.bySize(csv), "tcp", "1.0", "2.0", "x")
    assert(md.contains("against the plugin's tcp transport, x."), md)
    val floorRow = md.linesIterator.find(_.startsWith("| 64 KiB | floor (plain sendfile) |"))
    assert(floorRow.exists(_.contains("| 250.0 (0.50x) | 0.010 |")), md)
    assert(md.contains("The floor row is no product"), md)
  }

  test("a block in a composite Netty buffer is checked in place; a wrong offset is caught") {
    val words = java.nio.ByteBuffer.allocate(64)
    (0 until 8).foreach(i => words.putLong(4096L + 8 * i))
    val bytes = words.array()
    def composite(from: Int): io.netty.buffer.ByteBuf = {
      val c = io.netty.buffer.Unpooled.compositeBuffer()
      c.addComponent(true, io.netty.buffer.Unpooled.wrappedBuffer(bytes, from, 24))
      c.addComponent(true, io.netty.buffer.Unpooled.wrappedBuffer(bytes, from + 24, 32))
      c
    }
    val ok = new org.apache.spark.network.buffer.NettyManagedBuffer(composite(0))
    assert(TransportBench.checked(ok, 4096L, 56) == null)
    assert(ok.size() == 56)
    ok.release()
    val off = new org.apache.spark.network.buffer.NettyManagedBuffer(composite(8))
    assert(TransportBench.checked(off, 4096L, 56) == "block at 4096 holds words 4104 .. 4152")
  }

  test("results without the spark baseline are refused") {
    val csv = JArrays.asList("header", "1,verbs,4096,1,4096,1.0,0.1,0.0,1")
    intercept[IllegalArgumentException] {
      TransportReport.markdown(TransportReport.bySize(csv), "verbs", "", "", "x")
    }
  }
}
