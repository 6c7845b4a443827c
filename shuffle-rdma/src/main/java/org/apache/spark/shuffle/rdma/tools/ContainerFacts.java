/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Whether the doctor runs inside a container, and on Kubernetes: there the fixes for a
 * missing RDMA device, memlock and CAP_IPC_LOCK go into the pod spec, not into the host's
 * limits.conf. Reads below an injectable root and environment so tests can fake a pod.
 */
final class ContainerFacts {
  /**
   * The RDMA shared device plugin's resource as the NVIDIA Network Operator's sample
   * NicClusterPolicy advertises it ("rdma" prefix, resourceName rdma_shared_device_a); the
   * one name the executor template requests and docs/kubernetes.md explains.
   */
  static final String SHARED_DEVICE_RESOURCE = "rdma/rdma_shared_device_a";

  /** cgroup path fragments container runtimes use (cgroup v1 paths, or v2 with nesting). */
  private static final String[] CGROUP_MARKERS = {
      "kubepods", "docker", "containerd", "cri-containerd", "crio", "libpod", "lxc"};

  private final Path root;
  private final Map<String, String> env;

  ContainerFacts(Path root, Map<String, String> env) {
    this.root = root;
    this.env = env;
  }

  static ContainerFacts forHost() {
    return new ContainerFacts(Paths.get("/"), System.getenv());
  }

  /** Kubernetes injects KUBERNETES_SERVICE_HOST into every container of a pod. */
  boolean kubernetes() {
    String host = env.get("KUBERNETES_SERVICE_HOST");
    return host != null && !host.isEmpty();
  }

  /** What shows a container; empty when nothing does. */
  List<String> evidence() {
    List<String> why = new ArrayList<>();
    if (kubernetes()) {
      why.add("KUBERNETES_SERVICE_HOST is set");
    }
    if (Files.exists(root.resolve(".dockerenv"))) {
      why.add("/.dockerenv exists");
    }
    if (Files.exists(root.resolve("run/.containerenv"))) {
      why.add("/run/.containerenv exists");
    }
    String marker = cgroupMarker();
    if (marker != null) {
      why.add("cgroup path names " + marker);
    }
    return why;
  }

  boolean inContainer() {
    return !evidence().isEmpty();
  }

  private String cgroupMarker() {
    for (String file : new String[] {"proc/self/cgroup", "proc/1/cgroup"}) {
      for (String line : lines(file)) {
        String path = line.toLowerCase(Locale.ROOT);
        for (String m : CGROUP_MARKERS) {
          if (path.contains(m)) {
            return m;
          }
        }
      }
    }
    return null;
  }

  private List<String> lines(String rel) {
    try {
      return Files.readAllLines(root.resolve(rel));
    } catch (IOException e) {
      return List.of();
    }
  }
}
