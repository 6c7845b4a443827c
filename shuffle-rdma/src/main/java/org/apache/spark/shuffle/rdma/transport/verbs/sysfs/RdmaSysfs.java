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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Stream;

/**
 * Reads RDMA devices and ports from sysfs (the same files ibv_devinfo and 'rdma link' show)
 * without any native code, so the provider and the doctor can say what is missing even when
 * the native layer cannot load. The root is a parameter so tests run on a fake tree.
 */
public final class RdmaSysfs {
  private final Path sys;

  /** @param sys the sysfs mount, "/sys" on a real host */
  public RdmaSysfs(Path sys) {
    this.sys = sys;
  }

  public static RdmaSysfs host() {
    return new RdmaSysfs(Paths.get("/sys"));
  }

  public Path infinibandClass() {
    return sys.resolve("class/infiniband");
  }

  /** False when the kernel has no RDMA core loaded at all (no /sys/class/infiniband). */
  public boolean hasRdmaClass() {
    return Files.isDirectory(infinibandClass());
  }

  /** Device names, sorted. */
  public List<String> devices() {
    return list(infinibandClass());
  }

  /** Every port of every device, in device then port order. */
  public List<RdmaPort> ports() {
    List<RdmaPort> all = new ArrayList<>();
    for (String dev : devices()) {
      all.addAll(ports(dev));
    }
    return all;
  }

  public List<RdmaPort> ports(String device) {
    List<RdmaPort> result = new ArrayList<>();
    Path portsDir = infinibandClass().resolve(device).resolve("ports");
    List<String> names = list(portsDir);
    names.sort(Comparator.comparingInt(RdmaSysfs::parseIntOrMax));
    for (String p : names) {
      int port = parseIntOrMax(p);
      if (port == Integer.MAX_VALUE) {
        continue;
      }
      Path dir = portsDir.resolve(p);
      result.add(new RdmaPort(device, port, stateName(read(dir.resolve("state"))),
          stateName(read(dir.resolve("phys_state"))), read(dir.resolve("link_layer")),
          gids(dir), netdevs(device, dir)));
    }
    return result;
  }

  /** MTU of a network interface, if sysfs has it. */
  public OptionalInt netdevMtu(String netdev) {
    String v = read(sys.resolve("class/net").resolve(netdev).resolve("mtu"));
    try {
      return v.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v));
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  /** rdma_cm's configfs tree (present when configfs is mounted and rdma_cm is loaded). */
  public Path rdmaCmConfig() {
    return sys.resolve("kernel/config/rdma_cm");
  }

  /**
   * The file holding rdma_cm's default ToS for connections on a port that set none; it
   * exists only once someone created the device's directory ({@code mkdir
   * /sys/kernel/config/rdma_cm/<dev>}, which changes no setting).
   */
  public Path defaultRoceTosFile(String device, int port) {
    return rdmaCmConfig().resolve(device).resolve("ports").resolve(Integer.toString(port))
        .resolve("default_roce_tos");
  }

  /** rdma_cm's default ToS of a port, if configfs shows it. */
  public OptionalInt defaultRoceTos(String device, int port) {
    String v = read(defaultRoceTosFile(device, port));
    try {
      return v.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v));
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  /** "4: ACTIVE" becomes "ACTIVE"; "5: LinkUp" becomes "LinkUp". */
  static String stateName(String raw) {
    int colon = raw.indexOf(':');
    return (colon >= 0 ? raw.substring(colon + 1) : raw).trim();
  }

  private List<RdmaPort.Gid> gids(Path portDir) {
    List<RdmaPort.Gid> gids = new ArrayList<>();
    Path gidDir = portDir.resolve("gids");
    List<String> names = list(gidDir);
    names.sort(Comparator.comparingInt(RdmaSysfs::parseIntOrMax));
    for (String n : names) {
      String addr = read(gidDir.resolve(n));
      if (addr.isEmpty() || addr.replace("0", "").replace(":", "").isEmpty()) {
        continue; // empty table entry
      }
      gids.add(new RdmaPort.Gid(parseIntOrMax(n), addr,
          read(portDir.resolve("gid_attrs/types").resolve(n))));
    }
    return gids;
  }

  /**
   * The netdevs behind a port: RoCE lists them per GID in gid_attrs/ndevs; IPoIB and some
   * drivers expose them as the PCI device's net/ children instead.
   */
  private List<String> netdevs(String device, Path portDir) {
    LinkedHashSet<String> names = new LinkedHashSet<>();
    Path ndevs = portDir.resolve("gid_attrs/ndevs");
    List<String> entries = list(ndevs);
    entries.sort(Comparator.comparingInt(RdmaSysfs::parseIntOrMax));
    for (String n : entries) {
      String name = read(ndevs.resolve(n));
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    if (names.isEmpty()) {
      names.addAll(list(infinibandClass().resolve(device).resolve("device/net")));
    }
    return new ArrayList<>(names);
  }

  private static int parseIntOrMax(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE;
    }
  }

  private static List<String> list(Path dir) {
    List<String> names = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return names;
    }
    try (Stream<Path> s = Files.list(dir)) {
      s.forEach(p -> names.add(p.getFileName().toString()));
    } catch (IOException e) {
      return names;
    }
    names.sort(null);
    return names;
  }

  /** File content trimmed; "" when absent or unreadable (sysfs returns EINVAL for unused GIDs). */
  static String read(Path file) {
    try {
      return new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      return "";
    }
  }
}
