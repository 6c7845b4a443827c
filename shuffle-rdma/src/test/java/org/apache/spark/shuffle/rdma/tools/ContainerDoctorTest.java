/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.apache.spark.shuffle.rdma.transport.verbs.VerbsPreflight;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsRuntime;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.HostFacts;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.RdmaSysfs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The doctor inside a pod: fake /proc, /dev and environment trees of real pods' shapes. */
class ContainerDoctorTest {
  /** Docker's and containerd's default capability set: no CAP_IPC_LOCK (bit 14). */
  private static final String DEFAULT_CAPS = "00000000a80425fb";
  private static final Map<String, String> POD_ENV =
      Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443");

  @TempDir
  Path root;

  private void write(String rel, String text) throws IOException {
    Path p = root.resolve(rel);
    Files.createDirectories(p.getParent());
    Files.writeString(p, text);
  }

  private void proc(String capEff, String memlock) throws IOException {
    write("proc/self/status", "Name:\tjava\nCapInh:\t0000000000000000\nCapPrm:\t" + capEff
        + "\nCapEff:\t" + capEff + "\n");
    write("proc/self/limits", "Limit                     Soft Limit           Hard Limit  "
        + "         Units     \nMax locked memory         " + memlock + "              "
        + memlock + "              bytes     \n");
  }

  /** /proc/self/status of a process of the given uid with all four capability sets. */
  private void procOf(int uid, String bnd, String prm, String eff, String amb, String memlock)
      throws IOException {
    write("proc/self/status", "Name:\tjava\nUid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid
        + "\nCapInh:\t" + amb + "\nCapPrm:\t" + prm + "\nCapEff:\t" + eff + "\nCapBnd:\t" + bnd
        + "\nCapAmb:\t" + amb + "\n");
    write("proc/self/limits", "Limit                     Soft Limit           Hard Limit  "
        + "         Units     \nMax locked memory         " + memlock + "              "
        + memlock + "              bytes     \n");
  }

  private String doctor(Map<String, String> env) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    VerbsPreflight pf = new VerbsPreflight(new RdmaSysfs(root), new HostFacts(root),
        n -> Optional.empty());
    new Doctor(pf, VerbsRuntime::get, SparkDefaults.empty(), new ContainerFacts(root, env),
        new PrintStream(buf, true, StandardCharsets.UTF_8)).check();
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void podWithoutDeviceOrIpcLockGetsThePodSpecFixes() throws IOException {
    proc(DEFAULT_CAPS, "8388608");
    write("proc/self/cgroup", "0::/kubepods.slice/kubepods-besteffort.slice/"
        + "cri-containerd-3f2a.scope\n");
    String out = doctor(POD_ENV);
    assertTrue(out.contains("[INFO] running in a container on Kubernetes "
        + "(KUBERNETES_SERVICE_HOST is set, cgroup path names kubepods)"), out);
    assertTrue(out.contains("[FAIL] no RDMA device in this container"), out);
    assertTrue(out.contains("rdma/rdma_shared_device_a: 1"), out);
    assertTrue(out.contains("no CAP_IPC_LOCK and memlock 8192 KiB"), out);
    assertTrue(out.contains("capabilities.add: [\"IPC_LOCK\"]"), out);
    assertTrue(out.contains("containerd: LimitMEMLOCK=infinity in its systemd unit"), out);
    assertTrue(out.contains("CRI-O: default_ulimits = [\"memlock=-1:-1\"]"), out);
  }

  @Test
  void podWithDeviceAndIpcLockPassesTheContainerChecks() throws IOException {
    // CapEff with CAP_IPC_LOCK added (bit 14 = 0x4000) to the default set.
    proc(String.format("%016x", Long.parseLong(DEFAULT_CAPS, 16) | (1L << 14)), "8388608");
    write("dev/infiniband/rdma_cm", "");
    write("dev/infiniband/uverbs0", "");
    String out = doctor(POD_ENV);
    assertTrue(out.contains("[INFO] running in a container on Kubernetes"), out);
    assertTrue(out.contains("[ OK ] CAP_IPC_LOCK in the container's effective capabilities"),
        out);
    assertFalse(out.contains("no RDMA device in this container"), out);
    assertFalse(out.contains("no CAP_IPC_LOCK"), out);
  }

  @Test
  void nonRootSparkUserWithIpcLockInThePodSpecIsToldItIsNotEffective() throws IOException {
    // apache/spark images: uid 185. The pod adds IPC_LOCK, so it is in the bounding set, but
    // a non-root process gets no permitted/effective/ambient capabilities from Kubernetes.
    String bnd = String.format("%016x", Long.parseLong(DEFAULT_CAPS, 16) | (1L << 14));
    String none = "0000000000000000";
    procOf(185, bnd, none, none, none, "8388608");
    write("dev/infiniband/rdma_cm", "");
    write("dev/infiniband/uverbs0", "");
    String out = doctor(POD_ENV);
    assertTrue(out.contains("[WARN] CAP_IPC_LOCK granted to this container (in CapBnd) but not "
        + "effective: this process runs as uid 185"), out);
    assertTrue(out.contains("CapAmb 0000000000000000"), out);
    assertTrue(out.contains("/opt/shuffle-rdma/rdma-entrypoint.sh"), out);
    assertTrue(out.contains("default_ulimits"), out);
    assertFalse(out.contains("add IPC_LOCK to the executor container"), out);
  }

  @Test
  void nonRootWithoutIpcLockInThePodSpecNeedsBothFixes() throws IOException {
    String none = "0000000000000000";
    procOf(185, DEFAULT_CAPS, none, none, none, "8388608");
    String out = doctor(POD_ENV);
    assertTrue(out.contains("no CAP_IPC_LOCK and memlock 8192 KiB"), out);
    assertTrue(out.contains("add IPC_LOCK to the executor container"), out);
    assertTrue(out.contains("as this process runs as uid 185, start it through the image's "
        + "/opt/shuffle-rdma/rdma-entrypoint.sh"), out);
  }

  @Test
  void spawnedThroughTheWrapperTheSparkUserHasIpcLock() throws IOException {
    // What rdma-entrypoint.sh leaves: IPC_LOCK inheritable + ambient, hence permitted and
    // effective for uid 185 (KubernetesImageTest runs the wrapper for real).
    String ipc = "0000000000004000";
    String bnd = String.format("%016x", Long.parseLong(DEFAULT_CAPS, 16) | (1L << 14));
    procOf(185, bnd, ipc, ipc, ipc, "8388608");
    write("dev/infiniband/rdma_cm", "");
    write("dev/infiniband/uverbs0", "");
    String out = doctor(POD_ENV);
    assertTrue(out.contains("[ OK ] CAP_IPC_LOCK in the container's effective capabilities"),
        out);
    assertFalse(out.contains("not effective"), out);
  }

  @Test
  void executorTemplateRequestsTheResourceTheDoctorNames() throws IOException {
    Path template = Path.of(System.getProperty("project.root", ".."),
        "conf-templates/kubernetes/executor-pod-template.yaml");
    String yaml = Files.readString(template);
    assertTrue(yaml.contains(ContainerFacts.SHARED_DEVICE_RESOURCE + ": 1"), yaml);
    assertFalse(yaml.contains("hca_shared_devices_a: 1"), yaml);
  }

  @Test
  void dockerWithoutKubernetesGetsDockerFixes() throws IOException {
    proc(DEFAULT_CAPS, "65536");
    write(".dockerenv", "");
    String out = doctor(Map.of());
    assertTrue(out.contains("[INFO] running in a container (/.dockerenv exists)"), out);
    assertTrue(out.contains("docker run --device=/dev/infiniband/rdma_cm"), out);
    assertTrue(out.contains("--cap-add=IPC_LOCK"), out);
    assertFalse(out.contains("rdma_shared_device_a"), out);
  }

  @Test
  void bareHostHasNoContainerSection() throws IOException {
    proc(DEFAULT_CAPS, "8388608");
    write("proc/self/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
    ContainerFacts facts = new ContainerFacts(root, Map.of("HOME", "/root"));
    assertFalse(facts.inContainer());
    assertEquals(0, facts.evidence().size());
    assertFalse(doctor(Map.of()).contains("running in a container"));
  }
}
