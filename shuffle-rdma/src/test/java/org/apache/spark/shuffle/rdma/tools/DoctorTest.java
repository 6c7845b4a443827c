/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.OptionalInt;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.transport.verbs.VerbsPreflight;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.TrafficClass;
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

  /** The doctor's lines on a fake host with a container limit and this spark-defaults.conf. */
  private String budget(String memoryMax, String memlock, String defaults) throws IOException {
    Path root = tmp.resolve("b" + Math.abs((memoryMax + memlock + defaults).hashCode()));
    Files.createDirectories(root.resolve("proc/self"));
    Files.writeString(root.resolve("proc/self/limits"), "Max locked memory         " + memlock
        + "                " + memlock + "                bytes\n");
    Files.writeString(root.resolve("proc/self/cgroup"), "0::/ctr\n");
    Files.createDirectories(root.resolve("sys/fs/cgroup/ctr"));
    Files.writeString(root.resolve("sys/fs/cgroup/ctr/memory.max"), memoryMax + "\n");
    Path conf = root.resolve("spark-defaults.conf");
    Files.writeString(conf, defaults);
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    VerbsPreflight pf = new VerbsPreflight(new RdmaSysfs(root), new HostFacts(root),
        n -> Optional.empty());
    new Doctor(pf, VerbsRuntime::get, SparkDefaults.read(conf),
        new PrintStream(buf, true, StandardCharsets.UTF_8)).check();
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void holdsTheCapOnRegisteredBytesAgainstTheContainerAndMemlock() throws IOException {
    String cap = RdmaConf.MAX_REGISTERED_BYTES().key();
    String noCap = budget("4294967296", "unlimited", "");
    assertTrue(noCap.contains("[WARN] container memory limit 4096 MiB and no cap on registered "
        + "map outputs (" + cap + "=0)"), noCap);
    String over = budget("4294967296", "unlimited",
        "spark.executor.memory 3g\n" + cap + " 1g\n");
    assertTrue(over.contains("[WARN] heap 3072 MiB (spark.executor.memory) + receive pool 128 MiB"
        + " + " + cap + " 1024 MiB is more than the container memory limit 4096 MiB"), over);
    String fits = budget("4294967296", "unlimited",
        "spark.executor.memory 2048\n" + cap + " 1g\n");
    assertTrue(fits.contains("[ OK ] container memory limit 4096 MiB holds the heap 2048 MiB, "
        + "the receive pool 128 MiB and registered outputs up to 1024 MiB"), fits);
    String memlock = budget("max", "268435456", cap + " 1g\n");
    assertTrue(memlock.contains("container memory limit: none"), memlock);
    assertTrue(memlock.contains("[WARN] memlock 256 MiB is below the receive pool 128 MiB + "
        + cap + " 1024 MiB"), memlock);
    assertFalse(memlock.contains("every registered map output counts too"), memlock);
    String covered = budget("max", "4294967296", cap + " 1g\n");
    assertTrue(covered.contains("[ OK ] memlock 4096 MiB covers the receive pool and " + cap
        + " 1024 MiB"), covered);
    assertFalse(covered.contains("is below the receive pool"), covered);
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
  void trafficClassFromSparkDefaultsIsCheckedLikeTheTransportChecksIt() throws IOException {
    String key = RdmaConf.VERBS_TRAFFIC_CLASS().key();
    assertEquals(key, SparkDefaults.fullKey(SparkDefaults.TRAFFIC_CLASS));
    assertEquals(OptionalInt.empty(), SparkDefaults.empty().trafficClass());
    Path conf = tmp.resolve("tos.conf");
    Files.writeString(conf, key + " 106\n");
    assertEquals(OptionalInt.of(106), SparkDefaults.read(conf).trafficClass());
    for (String bad : new String[] {"256", "-1", "0x6a", ""}) {
      Files.writeString(conf, key + "=" + bad + "\n");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> SparkDefaults.read(conf).trafficClass(), bad);
      assertTrue(e.getMessage().contains(key), e.getMessage());
    }
  }

  @Test
  void reportsTheDeviceDefaultTosOrHowToReadIt() throws IOException {
    RdmaSysfs sysfs = new RdmaSysfs(tmp);
    String line = Doctor.defaultTosLine(sysfs, "mlx5_0", 1);
    assertTrue(line.contains("cannot be read") && line.contains("configfs not mounted")
        && line.contains("mount -t configfs none /sys/kernel/config")
        && line.contains("mkdir -p " + tmp.resolve("kernel/config/rdma_cm/mlx5_0"))
        && line.contains("cat " + tmp.resolve(
            "kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos")), line);
    Files.createDirectories(tmp.resolve("kernel/config/rdma_cm"));
    line = Doctor.defaultTosLine(sysfs, "mlx5_0", 1);
    assertTrue(line.contains("no rdma_cm configfs directory for mlx5_0"), line);
    Path file = sysfs.defaultRoceTosFile("mlx5_0", 1);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "106\n");
    line = Doctor.defaultTosLine(sysfs, "mlx5_0", 1);
    assertTrue(line.contains("default_roce_tos): ToS 106 (DSCP 26, ECN ECT(0))"), line);
    assertEquals("ToS 0 (DSCP 0, ECN not ECN-capable)", TrafficClass.describe(0));
    assertEquals("ToS 255 (DSCP 63, ECN CE)", TrafficClass.describe(255));
    assertTrue(TrafficClass.describe(OptionalInt.empty(), "k").contains("device's default"));
  }

  @Test
  void roceMtuFollowsTheNetdevMtu() {
    assertEquals(1024, Doctor.roceMtu(1500));
    assertEquals(4096, Doctor.roceMtu(9000));
    assertEquals(2048, Doctor.roceMtu(4000));
  }
}
