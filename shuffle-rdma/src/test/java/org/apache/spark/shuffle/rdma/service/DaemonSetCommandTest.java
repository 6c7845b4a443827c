/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTestSupport;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The Kubernetes DaemonSet's service command as the pod runs it: it asks for RDMA as the
 * executors do (their device-plugin resource, IPC_LOCK, the image's entrypoint), serves on
 * {@code auto} with verbs binding the RDMA netdev (bindAddress empty, not the pod IP), and on a
 * node without RDMA (this host) the very same arguments serve on tcp at the pod IP: an output
 * handed over is read back from the address the answer names.
 */
class DaemonSetCommandTest {
  private static final Path TEMPLATES = Paths.get(System.getProperty("project.root", ".."))
      .resolve("conf-templates/kubernetes");

  @TempDir
  Path dir;

  @SuppressWarnings("unchecked")
  private static Map<String, Object> container(String file, String name) throws Exception {
    Map<String, Object> doc = (Map<String, Object>) new Yaml(new SafeConstructor(
        new LoaderOptions())).load(Files.readString(TEMPLATES.resolve(file)));
    Map<String, Object> spec = (Map<String, Object>) doc.get("spec");
    if (spec.containsKey("template")) {
      spec = (Map<String, Object>) ((Map<String, Object>) spec.get("template")).get("spec");
    }
    for (Map<String, Object> c : (List<Map<String, Object>>) spec.get("containers")) {
      if (name.equals(c.get("name"))) {
        return c;
      }
    }
    throw new AssertionError("no container " + name + " in " + file);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> at(Map<String, Object> m, String... path) {
    Map<String, Object> cur = m;
    for (String p : path) {
      Object next = cur == null ? null : cur.get(p);
      cur = next instanceof Map ? (Map<String, Object>) next : null;
    }
    return cur == null ? Map.of() : cur;
  }

  @Test
  void theServicePodAsksForRdmaAsExecutorsDo() throws Exception {
    Map<String, Object> service = container("node-service-daemonset.yaml", "node-service");
    Map<String, Object> executor = container("executor-pod-template.yaml", "spark-executor");
    Map<String, Object> executorLimits = at(executor, "resources", "limits");
    List<String> rdma = new ArrayList<>();
    for (String k : executorLimits.keySet()) {
      if (k.startsWith("rdma/")) {
        rdma.add(k);
      }
    }
    assertEquals(1, rdma.size(), "the executor template's RDMA resource: " + executorLimits);
    Map<String, Object> limits = at(service, "resources", "limits");
    assertEquals(executorLimits.get(rdma.get(0)), limits.get(rdma.get(0)),
        "the service pod asks for " + rdma.get(0) + " as executors do: " + limits);
    assertEquals(List.of("IPC_LOCK"), at(service, "securityContext", "capabilities").get("add"),
        "memlock: IPC_LOCK");
    assertEquals(List.of("/opt/shuffle-rdma/rdma-entrypoint.sh"), service.get("command"),
        "the image's entrypoint keeps IPC_LOCK for uid 185 and raises memlock");
    ServiceArgs args = ServiceArgs.parse(serviceArgs(service, "10.1.2.3"));
    assertEquals("auto", args.transport);
    assertEquals("10.1.2.3", args.host);
    assertEquals("", args.conf.get(RdmaConf.BIND_ADDRESS().key()),
        "verbs binds the RDMA netdev, not the pod IP");
  }

  /** The container's arguments after the launcher, the pod IP and a socket of the test's. */
  @SuppressWarnings("unchecked")
  private String[] serviceArgs(Map<String, Object> service, String podIp) {
    List<String> args = new ArrayList<>((List<String>) service.get("args"));
    assertEquals("/opt/shuffle-rdma/bin/shuffle-rdma-service", args.remove(0));
    List<String> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i).replace("$(POD_IP)", podIp);
      out.add(a);
      if (a.equals("--socket")) {
        out.add(dir.resolve("service.sock").toString());
        i++;
      }
    }
    return out.toArray(new String[0]);
  }

  @Test
  void onANodeWithoutRdmaTheSameCommandServesOnTcpAtThePodIp() throws Exception {
    String[] devices = new java.io.File("/sys/class/infiniband").list();
    Assumptions.assumeTrue(devices == null || devices.length == 0,
        "an RDMA device is present: the service would serve on verbs");
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    // A loopback address other than this host's own, so the test tells --host from the default.
    String podIp = "127.0.0.2";
    String[] argv = serviceArgs(container("node-service-daemonset.yaml", "node-service"), podIp);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    MapOutputFiles f = new MapOutputFiles(Files.createDirectories(dir.resolve("out")), 1, 1,
        new int[] {100, 0, 50}, 7);
    try (NodeService s = new NodeService(ServiceArgs.parse(argv), new ServiceLog(
            new PrintStream(log, true, StandardCharsets.UTF_8)));
         ExecutorHandOver h = new ExecutorHandOver(dir.resolve("service.sock"), "app-k8s-1",
             30_000);
         TcpTransport reader = TcpTestSupport.transport(new SparkConf(false), null,
             "app-k8s-1")) {
      String text = log.toString(StandardCharsets.UTF_8);
      assertTrue(text.contains("transport auto: tcp, because verbs cannot start here: "), text);
      assertTrue(text.contains(" transport=tcp address=" + podIp + ":"), text);
      HandOverAnswer a = h.handOver(1, 1, f.data.toFile(), f.index.toFile(), null,
          ChecksumAlgorithm.NONE);
      assertNotNull(a, h.lastProblem());
      assertEquals(podIp, a.address().host(), "readers reach the pod IP");
      MapOutputDescriptor d = a.descriptor();
      assertArrayEquals(f.partition(2), ReadResult.read(reader.connect(a.address()),
          d.dataAddress(0) + 100, d.dataKey(0), 50));
    }
  }
}
