/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.OptionalLong;

/**
 * Facts about this host and process that decide whether verbs can work, read from /proc,
 * /dev and /lib/modules (root configurable for tests): locked-memory limit, CAP_IPC_LOCK,
 * the rdma_cm/uverbs device nodes and whether the Soft-RoCE module exists.
 */
public final class HostFacts {
  /** Linux capability number of CAP_IPC_LOCK (lets a process pin memory beyond memlock). */
  static final int CAP_IPC_LOCK = 14;

  private final Path root;

  public HostFacts(Path root) {
    this.root = root;
  }

  public static HostFacts host() {
    return new HostFacts(Paths.get("/"));
  }

  /** Soft RLIMIT_MEMLOCK in bytes; Long.MAX_VALUE for unlimited; empty when unknown. */
  public OptionalLong memlockLimit() {
    for (String line : lines("proc/self/limits")) {
      if (line.startsWith("Max locked memory")) {
        String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
        if (f.length > 0) {
          if (f[0].equals("unlimited")) {
            return OptionalLong.of(Long.MAX_VALUE);
          }
          try {
            return OptionalLong.of(Long.parseLong(f[0]));
          } catch (NumberFormatException e) {
            return OptionalLong.empty();
          }
        }
      }
    }
    return OptionalLong.empty();
  }

  /** True when the effective capabilities include CAP_IPC_LOCK (then memlock does not apply). */
  public boolean hasIpcLock() {
    return ipcLockIn("CapEff");
  }

  /**
   * Whether CAP_IPC_LOCK is in one capability set of this process, as /proc/self/status
   * shows it: "CapInh", "CapPrm", "CapEff", "CapBnd" or "CapAmb". In a container the bounding
   * set holds what the runtime granted (the pod spec's capabilities.add); a non-root process
   * has it effective only through the ambient set, which Kubernetes never fills.
   */
  public boolean ipcLockIn(String set) {
    OptionalLong caps = capabilities(set);
    return caps.isPresent() && (caps.getAsLong() & (1L << CAP_IPC_LOCK)) != 0;
  }

  /** A capability set of this process (hex bits from /proc/self/status); empty if unknown. */
  public OptionalLong capabilities(String set) {
    for (String line : lines("proc/self/status")) {
      if (line.startsWith(set + ":")) {
        try {
          return OptionalLong.of(
              Long.parseUnsignedLong(line.substring(set.length() + 1).trim(), 16));
        } catch (NumberFormatException e) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }

  /**
   * This process's memory limit under cgroup v2: the smallest {@code memory.max} from its own
   * cgroup (the "0::" line of /proc/self/cgroup) up to the root, Long.MAX_VALUE when every
   * one is "max"; empty without cgroup v2 (no such line, no memory.max on the path).
   */
  public OptionalLong containerMemoryLimit() {
    String path = null;
    for (String line : lines("proc/self/cgroup")) {
      if (line.startsWith("0::")) {
        path = line.substring(3).trim();
      }
    }
    if (path == null) {
      return OptionalLong.empty();
    }
    Path base = root.resolve("sys/fs/cgroup");
    Path dir = base.resolve(path.startsWith("/") ? path.substring(1) : path).normalize();
    if (!dir.startsWith(base)) {
      return OptionalLong.empty();
    }
    long limit = Long.MAX_VALUE;
    boolean seen = false;
    for (; dir != null && dir.startsWith(base); dir = dir.getParent()) {
      List<String> max = lines(root.relativize(dir.resolve("memory.max")).toString());
      if (max.isEmpty()) {
        continue;
      }
      seen = true;
      String v = max.get(0).trim();
      if (!v.equals("max")) {
        try {
          limit = Math.min(limit, Long.parseLong(v));
        } catch (NumberFormatException e) {
          // not a limit
        }
      }
    }
    return seen ? OptionalLong.of(limit) : OptionalLong.empty();
  }

  /** The effective uid of this process (Uid: line of /proc/self/status); -1 if unknown. */
  public int uid() {
    for (String line : lines("proc/self/status")) {
      if (line.startsWith("Uid:")) {
        String[] f = line.substring(4).trim().split("\\s+");
        try {
          return Integer.parseInt(f.length > 1 ? f[1] : f[0]);
        } catch (NumberFormatException e) {
          return -1;
        }
      }
    }
    return -1;
  }

  /** /dev/infiniband/rdma_cm exists (the rdma_ucm module is loaded). */
  public boolean hasRdmaCmDevice() {
    return Files.exists(root.resolve("dev/infiniband/rdma_cm"));
  }

  /** At least one /dev/infiniband/uverbsN (ib_uverbs loaded and a device present). */
  public boolean hasUverbsDevice() {
    try (var s = Files.list(root.resolve("dev/infiniband"))) {
      return s.anyMatch(p -> p.getFileName().toString().startsWith("uverbs"));
    } catch (IOException e) {
      return false;
    }
  }

  public String kernelRelease() {
    List<String> l = lines("proc/sys/kernel/osrelease");
    return l.isEmpty() ? "" : l.get(0).trim();
  }

  /**
   * True when the kernel pins READ-only registrations with FOLL_WRITE (before 6.2), so the
   * verbs transport's private mappings make it pin copies that count as process memory.
   * Unknown releases count as old (the cautious answer for memory budgeting).
   */
  public boolean pinsReadOnlyAsWrite() {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+)\\.(\\d+)")
        .matcher(kernelRelease());
    if (!m.find()) {
      return true;
    }
    int major = Integer.parseInt(m.group(1));
    int minor = Integer.parseInt(m.group(2));
    return major < 6 || (major == 6 && minor < 2);
  }

  /** rdma_rxe is loaded, built in, or installed as a module for the running kernel. */
  public boolean rxeAvailable() {
    if (Files.isDirectory(root.resolve("sys/module/rdma_rxe"))) {
      return true;
    }
    String release = kernelRelease();
    if (release.isEmpty()) {
      return false;
    }
    Path modules = root.resolve("lib/modules").resolve(release);
    for (String line : lines(root.relativize(modules.resolve("modules.builtin")).toString())) {
      if (line.endsWith("/rdma_rxe.ko")) {
        return true;
      }
    }
    Path dir = modules.resolve("kernel/drivers/infiniband/sw/rxe");
    try (var s = Files.list(dir)) {
      return s.anyMatch(p -> p.getFileName().toString().startsWith("rdma_rxe.ko"));
    } catch (IOException e) {
      return false;
    }
  }

  private List<String> lines(String relative) {
    try {
      return Files.readAllLines(root.resolve(relative), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return List.of();
    }
  }
}
