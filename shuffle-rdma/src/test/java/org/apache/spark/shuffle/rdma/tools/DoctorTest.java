/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.transport.verbs.VerbsPreflight;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsRuntime;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.HostFacts;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.RdmaSysfs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorTest {
  @TempDir
  Path tmp;

  private String run(Doctor d, ByteArrayOutputStream buf, int[] status) {
    status[0] = d.check();
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void reportsMissingPiecesWithFixesAndExitsNonZero() throws IOException {
    Files.writeString(tmp.resolve("limits"), "");
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    VerbsPreflight pf = new VerbsPreflight(new RdmaSysfs(tmp), new HostFacts(tmp),
        n -> Optional.empty());
    Doctor d = new Doctor(pf, VerbsRuntime::get, SparkDefaults.empty(),
        new PrintStream(buf, true, StandardCharsets.UTF_8));
    int[] status = new int[1];
    String out = run(d, buf, status);
    assertEquals(1, status[0], out);
    assertTrue(out.contains("[FAIL] no RDMA devices"), out);
    assertTrue(out.contains("fix: load your RDMA NIC's driver"), out);
    assertTrue(out.contains("/dev/infiniband/rdma_cm is missing"), out);
    assertTrue(out.contains("falls back to tcp"), out);
    if (!Boolean.getBoolean("native.skip")) {
      assertTrue(out.contains("[ OK ] native layer: "), out);
    }
  }

  @Test
  void thisHostWithoutRdmaExitsNonZero() {
    assumeFalse(Files.isDirectory(Paths.get("/sys/class/infiniband")), "host has RDMA");
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status = Doctor.run(new String[0], new PrintStream(buf, true, StandardCharsets.UTF_8));
    assertEquals(1, status, buf.toString(StandardCharsets.UTF_8));
  }

  @Test
  void readsSparkDefaultsAndRejectsBadUsage() throws Exception {
    Path conf = tmp.resolve("spark-defaults.conf");
    Files.writeString(conf, "# comment\nspark.shuffle.rdma.device   rxe0:1\n"
        + "spark.shuffle.rdma.verbs.receivePoolSize=64m\n");
    SparkDefaults d = SparkDefaults.read(conf);
    assertEquals("rxe0:1", d.device());
    assertEquals(64L << 20, d.receivePoolSize());
    assertEquals(1L << 30, d.regionSize());
    assertEquals(2, Main.run(new String[] {"nonsense"}));
    assertEquals(2, Doctor.run(new String[] {"a", "b"}, System.out));
  }

  /**
   * The doctor cannot evaluate RdmaConf (no Spark under java -jar): its defaults come from the
   * generated file and must mean what the entries mean.
   */
  @Test
  void reportsReadDepthsAndQueuePairsPerPeer() {
    ReadDepth.Device rxe = new ReadDepth.Device(128, 128, 0xFFFFFF);
    String depth = Doctor.depthLine(rxe);
    assertTrue(depth.contains("max_qp_init_rd_atom 128") && depth.contains("max_qp_rd_atom 128"),
        depth);
    String line = Doctor.queuePairsLine(0, "rxe0", rxe);
    assertTrue(line.startsWith("queue pairs per peer: 1 ") && line.contains("software"), line);
    line = Doctor.queuePairsLine(0, "mlx5_0", new ReadDepth.Device(16, 16, 0x02c9));
    assertTrue(line.startsWith("queue pairs per peer: 4 ") && line.contains("hardware"), line);
    assertTrue(Doctor.queuePairsLine(2, "rxe0", rxe).startsWith("queue pairs per peer: 2 "));
    assertTrue(Doctor.depthLine(ReadDepth.Device.decode(-1)).contains("failed"));
    assertEquals(0, SparkDefaults.empty().queuePairsPerPeer());
  }

  @Test
  void defaultsComeFromRdmaConf() {
    SparkConf empty = new SparkConf(false);
    SparkDefaults d = SparkDefaults.empty();
    assertEquals(empty.get(RdmaConf.DEVICE()), d.device());
    assertEquals(empty.get(RdmaConf.BIND_ADDRESS()), d.bindAddress());
    assertEquals(empty.get(RdmaConf.VERBS_ODP()), d.odp());
    assertEquals((long) (Long) empty.get(RdmaConf.REGION_SIZE()), d.regionSize());
    assertEquals((long) (Long) empty.get(RdmaConf.VERBS_RECEIVE_POOL_SIZE()),
        d.receivePoolSize());
    assertThrows(IllegalArgumentException.class, () -> d.get("verbs.recievePoolSize"));
  }

  @Test
  void roceMtuFollowsTheNetdevMtu() {
    assertEquals(1024, Doctor.roceMtu(1500));
    assertEquals(4096, Doctor.roceMtu(9000));
    assertEquals(2048, Doctor.roceMtu(4000));
  }
}
