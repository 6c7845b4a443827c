/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.function.Supplier;

import org.apache.spark.shuffle.rdma.transport.verbs.BuddyAllocator;
import org.apache.spark.shuffle.rdma.transport.verbs.OdpChoice;
import org.apache.spark.shuffle.rdma.transport.verbs.QueuePairStriping;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.TrafficClass;
import org.apache.spark.shuffle.rdma.transport.verbs.VerbsPreflight;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.BundledLibrary;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.LibraryChoice;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsClassNames;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsRuntime;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.HostFacts;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.PortSelector;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.RdmaPort;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.RdmaSysfs;

/**
 * {@code java -jar shuffle-rdma.jar doctor [spark-defaults.conf]}: checks everything the
 * verbs transport needs on this host and prints the fix for each failed check. Exit status
 * 0 when verbs can run, 1 when it cannot, 2 on bad usage.
 */
final class Doctor {
  /** Headroom RoCE needs below the netdev MTU (Eth/IP/UDP/BTH/ICRC headers). */
  static final int ROCE_HEADERS = 70;

  private final VerbsPreflight preflight;
  private final Supplier<VerbsRuntime> runtime;
  private final SparkDefaults conf;
  private final ContainerFacts container;
  private final Report report;

  Doctor(VerbsPreflight preflight, Supplier<VerbsRuntime> runtime, SparkDefaults conf,
      PrintStream out) {
    this(preflight, runtime, conf, ContainerFacts.forHost(), out);
  }

  Doctor(VerbsPreflight preflight, Supplier<VerbsRuntime> runtime, SparkDefaults conf,
      ContainerFacts container, PrintStream out) {
    this.preflight = preflight;
    this.runtime = runtime;
    this.conf = conf;
    this.container = container;
    this.report = new Report(out);
  }

  static int run(String[] args, PrintStream out) {
    SparkDefaults conf = SparkDefaults.empty();
    if (args.length > 1) {
      System.err.println("usage: doctor [path/to/spark-defaults.conf]");
      return 2;
    }
    if (args.length == 1) {
      Path p = Paths.get(args[0]);
      try {
        conf = SparkDefaults.read(p);
        out.println("configuration: " + p.toAbsolutePath());
      } catch (IOException | RuntimeException e) {
        System.err.println("cannot read " + p + ": " + e.getMessage());
        return 2;
      }
    }
    return new Doctor(VerbsPreflight.forHost(), VerbsRuntime::get, conf, out).check();
  }

  int check() {
    RdmaSysfs sysfs = preflight.sysfs();
    HostFacts host = preflight.host();
    PortSelector.Choice choice = devices(sysfs);
    rdmaCm();
    if (choice != null && choice.ok()) {
      roce(choice.port());
      mtu(sysfs, choice.port());
      trafficClass(sysfs, choice.port());
    }
    memlock(host);
    container(host);
    boolean nativeOk = nativeLayer();
    if (nativeOk && choice != null && choice.ok()) {
      odp(choice.bindAddress());
      readDepths(choice.bindAddress(), choice.port().device());
    }
    softRoce(host, sysfs);
    return report.finish();
  }

  private PortSelector.Choice devices(RdmaSysfs sysfs) {
    if (!sysfs.hasRdmaClass() || sysfs.devices().isEmpty()) {
      report.fail("no RDMA devices (" + sysfs.infinibandClass() + (sysfs.hasRdmaClass()
          ? " is empty)" : " does not exist)"), "load your RDMA NIC's driver (mlx5_ib, irdma, "
          + "bnxt_re, ...), or for a lab set up Soft-RoCE: modprobe rdma_rxe && rdma link add "
          + "rxe0 type rxe netdev <eth> (see docs/rdma-setup.md)");
      return null;
    }
    for (RdmaPort p : sysfs.ports()) {
      String line = "port " + p.id() + ": " + p.state() + "/" + p.physState() + ", link layer "
          + p.linkLayer() + ", netdev " + (p.netdevs().isEmpty() ? "none" : p.netdevs());
      if (p.isActive()) {
        report.ok(line);
      } else {
        report.info(line);
      }
    }
    PortSelector.Choice choice = preflight.port(conf.device(), conf.bindAddress());
    if (choice.ok()) {
      report.ok("verbs would use " + choice.port().id() + " and serve on " + choice.bindAddress()
          + (conf.bindAddress().isEmpty() ? " (IPv4 of the port's netdev)" : " (bindAddress)"));
    } else {
      report.fail(choice.problem(), null);
    }
    return choice;
  }

  private void rdmaCm() {
    String problem = preflight.rdmaCmProblem();
    if (problem == null) {
      report.ok("/dev/infiniband/rdma_cm present");
    } else {
      report.fail(problem, null);
    }
  }

  private void roce(RdmaPort port) {
    if (!port.isEthernet()) {
      report.info("link layer InfiniBand: RoCE GID checks do not apply (a subnet manager "
          + "must be running; ACTIVE shows it is)");
      return;
    }
    if (port.hasRoceV2Ipv4Gid()) {
      report.ok("RoCE v2 GID with an IPv4 address present on " + port.id());
    } else {
      report.warn("no RoCE v2 GID for an IPv4 address on " + port.id() + " (GIDs: "
          + port.gids() + ")", "assign an IPv4 address to " + port.netdevs() + "; RoCE v2 "
          + "(routable, UDP) needs it, and the default GID selection of rdma_cm prefers it");
    }
  }

  private void mtu(RdmaSysfs sysfs, RdmaPort port) {
    if (!port.isEthernet() || port.netdevs().isEmpty()) {
      return;
    }
    String netdev = port.netdevs().get(0);
    OptionalInt mtu = sysfs.netdevMtu(netdev);
    if (mtu.isEmpty()) {
      return;
    }
    int active = roceMtu(mtu.getAsInt());
    String line = "netdev " + netdev + " MTU " + mtu.getAsInt() + " gives RoCE active MTU "
        + active;
    if (active < 4096) {
      report.warn(line, "raise the MTU of " + netdev + " (and of every switch port on the "
          + "path) to at least 4200, e.g. 9000, so RoCE uses 4096-byte packets");
    } else {
      report.ok(line + "; make sure every switch port on the path also carries "
          + mtu.getAsInt() + "-byte frames (a smaller switch MTU drops RoCE packets)");
    }
  }

  /**
   * The class RoCE traffic travels in: the configured ToS, and the device's default from
   * rdma_cm's configfs (what connections get when the key is unset), or how to read it.
   */
  private void trafficClass(RdmaSysfs sysfs, RdmaPort port) {
    String tosKey = SparkDefaults.fullKey(SparkDefaults.TRAFFIC_CLASS);
    OptionalInt tos;
    try {
      tos = conf.trafficClass();
    } catch (IllegalArgumentException e) {
      report.fail(e.getMessage(), "set " + tosKey + " to the ToS of the fabric's "
          + "lossless class, e.g. 106 (DSCP 26, ECN-capable), or remove it");
      return;
    }
    if (!port.isEthernet()) {
      report.info("traffic class: " + TrafficClass.describe(tos, tosKey) + "; on InfiniBand "
          + "the ToS only selects the path's QoS class in the subnet manager's path query");
      return;
    }
    report.info("RoCE traffic class: " + TrafficClass.describe(tos, tosKey));
    report.info(defaultTosLine(sysfs, port.device(), port.port()));
  }

  static String defaultTosLine(RdmaSysfs sysfs, String device, int port) {
    OptionalInt def = sysfs.defaultRoceTos(device, port);
    if (def.isPresent()) {
      return "device default for " + device + ":" + port + " (rdma_cm default_roce_tos): "
          + TrafficClass.describe(def.getAsInt()) + ", used where "
          + SparkDefaults.fullKey(SparkDefaults.TRAFFIC_CLASS) + " is unset";
    }
    String why = Files.isDirectory(sysfs.rdmaCmConfig())
        ? "no rdma_cm configfs directory for " + device + " yet"
        : sysfs.rdmaCmConfig() + " is absent (configfs not mounted, or rdma_cm not loaded)";
    return "device default ToS for " + device + ":" + port + " cannot be read (" + why
        + "); to read it as root: mount -t configfs none /sys/kernel/config (if not mounted); "
        + "mkdir -p " + sysfs.rdmaCmConfig().resolve(device) + " (creates no setting); cat "
        + sysfs.defaultRoceTosFile(device, port) + ". Unset there, it is 0 (DSCP 0)";
  }

  /** Largest IB MTU that fits the netdev MTU with RoCE headers. */
  static int roceMtu(int netdevMtu) {
    int[] sizes = {4096, 2048, 1024, 512, 256};
    for (int s : sizes) {
      if (s + ROCE_HEADERS <= netdevMtu) {
        return s;
      }
    }
    return 256;
  }

  private void memlock(HostFacts host) {
    long need = BuddyAllocator.arenaSizeFor(conf.receivePoolSize()) + conf.regionSize();
    OptionalLong limit = host.memlockLimit();
    String problem = preflight.memlockProblem(need);
    if (problem != null) {
      report.fail(problem, null);
    } else if (host.hasIpcLock()) {
      report.ok("CAP_IPC_LOCK: memlock limit does not apply");
    } else if (limit.isPresent() && limit.getAsLong() != Long.MAX_VALUE) {
      long cap = conf.maxRegisteredBytes();
      long pool = BuddyAllocator.arenaSizeFor(conf.receivePoolSize());
      if (cap == 0) {
        report.warn("memlock " + limit.getAsLong() + " bytes covers the receive pool and one "
            + "region, but every registered map output counts too", "set memlock to unlimited "
            + "for executors (limits.conf, LimitMEMLOCK=infinity, --ulimit memlock=-1)");
      } else if (limit.getAsLong() >= pool + cap) {
        report.ok("memlock " + mib(limit.getAsLong()) + " covers the receive pool and "
            + SparkDefaults.fullKey("maxRegisteredBytes") + " " + mib(cap));
      } // else memoryBudget says what happens past it
    } else {
      report.ok("memlock " + (limit.isPresent() ? "unlimited" : "unknown"));
    }
    if (host.pinsReadOnlyAsWrite()) {
      report.info("kernel " + host.kernelRelease() + " (before 6.2) usually refuses to pin a "
          + "read-only shared mapping: with verbs.mapMode=auto map outputs are then mapped "
          + "shared read-write (the page cache pinned, no copy; docs/rdma-setup.md)");
    }
    memoryBudget(host);
  }

  /**
   * Registered map outputs are pinned page cache, charged to the executor's container and
   * never reclaimable: holds the cap on them against the container's memory limit (cgroup v2
   * memory.max) and the memlock limit, and says what will happen.
   */
  private void memoryBudget(HostFacts host) {
    String capKey = SparkDefaults.fullKey("maxRegisteredBytes");
    long cap = conf.maxRegisteredBytes();
    long pool = BuddyAllocator.arenaSizeFor(conf.receivePoolSize());
    OptionalLong max = host.containerMemoryLimit();
    String heapKey = SparkDefaults.EXECUTOR_MEMORY;
    OptionalLong heap = conf.sparkMebibytes(heapKey);
    if (!max.isPresent() || max.getAsLong() == Long.MAX_VALUE) {
      report.info("container memory limit: " + (max.isPresent() ? "none (cgroup v2 memory.max "
          + "is max)" : "unknown (no cgroup v2)") + "; registered map outputs are pinned page "
          + "cache " + (cap == 0 ? "without a cap (" + capKey + "=0)" : "up to " + mib(cap)
          + " (" + capKey + ")"));
    } else if (cap == 0) {
      report.warn("container memory limit " + mib(max.getAsLong()) + " and no cap on "
          + "registered map outputs (" + capKey + "=0): they are pinned page cache charged to "
          + "this container, never reclaimed; past the limit the container is killed",
          "set " + capKey + " to at most the limit minus the heap, the receive pool ("
          + mib(pool) + ") and the JVM's own memory (docs/kubernetes.md, memory arithmetic); "
          + "outputs over it are served through Spark's block transfer service");
    } else if (heap.isPresent() && heap.getAsLong() + pool + cap > max.getAsLong()) {
      report.warn("heap " + mib(heap.getAsLong()) + " (" + heapKey + ") + receive pool "
          + mib(pool) + " + " + capKey + " " + mib(cap) + " is more than the container memory "
          + "limit " + mib(max.getAsLong()) + ": the container can be killed once registered "
          + "outputs reach the cap", "lower " + capKey + " or raise the executor's memory "
          + "overhead (the limit is spark.executor.memory + spark.executor.memoryOverhead on "
          + "Kubernetes)");
    } else {
      report.ok("container memory limit " + mib(max.getAsLong()) + " holds "
          + (heap.isPresent() ? "the heap " + mib(heap.getAsLong()) + ", " : "")
          + "the receive pool " + mib(pool) + " and registered outputs up to " + mib(cap) + " ("
          + capKey + "; outputs over it are served through Spark's block transfer service)");
    }
    OptionalLong memlock = host.memlockLimit();
    if (cap > 0 && !host.hasIpcLock() && memlock.isPresent()
        && memlock.getAsLong() != Long.MAX_VALUE && memlock.getAsLong() < pool + cap) {
      report.warn("memlock " + mib(memlock.getAsLong()) + " is below the receive pool " + mib(pool)
          + " + " + capKey + " " + mib(cap) + ": registrations past it fail and those outputs "
          + "are served through Spark's block transfer service (registry.registrationFailures)",
          "raise memlock to unlimited, or lower " + capKey);
    }
  }

  private static String mib(long bytes) {
    return (bytes >> 20) + " MiB";
  }

  /**
   * In a container the host-level fixes above do not apply: the device, the capability and
   * the memlock limit come from the pod spec and the container runtime. Says which of them
   * this container lacks and what to put where (docs/kubernetes.md).
   */
  private void container(HostFacts host) {
    List<String> evidence = container.evidence();
    if (evidence.isEmpty()) {
      return;
    }
    boolean k8s = container.kubernetes();
    report.info("running in a container" + (k8s ? " on Kubernetes" : "") + " ("
        + String.join(", ", evidence) + ")");
    if (!host.hasRdmaCmDevice() || !host.hasUverbsDevice()) {
      report.fail("no RDMA device in this container (/dev/infiniband/rdma_cm and uverbs* "
          + "absent); with transport=auto this executor runs on tcp", k8s
          ? "request one in the executor pod template: resources.limits "
            + ContainerFacts.SHARED_DEVICE_RESOURCE + ": 1 (RDMA shared device plugin, the "
            + "NVIDIA Network Operator's name; use the name your nodes advertise, kubectl "
            + "describe node) or an SR-IOV VF through Multus (k8s.v1.cni.cncf.io/networks); "
            + "see docs/kubernetes.md and conf-templates/kubernetes/"
          : "pass the devices: docker run --device=/dev/infiniband/rdma_cm "
            + "--device=/dev/infiniband/uverbs0 (one per device)");
    }
    if (host.hasIpcLock()) {
      report.ok("CAP_IPC_LOCK in the container's effective capabilities");
      return;
    }
    OptionalLong limit = host.memlockLimit();
    if (limit.isPresent() && limit.getAsLong() == Long.MAX_VALUE) {
      return;
    }
    String shown = limit.isPresent() ? (limit.getAsLong() >> 10) + " KiB" : "unknown";
    int uid = host.uid();
    String runtimeDefault = "raise the runtime's default memlock on every node (containerd: "
        + "LimitMEMLOCK=infinity in its systemd unit; CRI-O: default_ulimits = "
        + "[\"memlock=-1:-1\"] in crio.conf), see docs/kubernetes.md";
    if (uid > 0 && host.ipcLockIn("CapBnd")) {
      // The runtime granted IPC_LOCK (pod spec capabilities.add) but this process is not
      // root: without an ambient capability it never reaches the permitted/effective sets.
      report.warn("CAP_IPC_LOCK granted to this container (in CapBnd) but not effective: this "
          + "process runs as uid " + uid + " and a non-root process gets added capabilities "
          + "only through the ambient set (CapAmb " + hex(host, "CapAmb") + ", CapPrm "
          + hex(host, "CapPrm") + ", CapEff " + hex(host, "CapEff") + "), which Kubernetes "
          + "never fills; memlock stays " + shown, k8s
          ? "start the container through the image's entrypoint wrapper "
            + "/opt/shuffle-rdma/rdma-entrypoint.sh (conf-templates/kubernetes/image/: as "
            + "root it raises memlock and keeps IPC_LOCK as an ambient capability, then runs "
            + "Spark as uid " + uid + "); or " + runtimeDefault
          : "start the process as root and drop to uid " + uid + " keeping the capability "
            + "(setpriv --inh-caps=+ipc_lock --ambient-caps=+ipc_lock, as "
            + "conf-templates/kubernetes/image/rdma-entrypoint.sh does), or docker run "
            + "--ulimit memlock=-1:-1");
      return;
    }
    report.warn("no CAP_IPC_LOCK and memlock " + shown + " (container runtimes default to "
        + "8 MiB, far below what registered map outputs need)", k8s
        ? "add IPC_LOCK to the executor container: securityContext.capabilities.add: "
          + "[\"IPC_LOCK\"] (conf-templates/kubernetes/executor-pod-template.yaml)"
          + (uid > 0 ? " and, as this process runs as uid " + uid + ", start it through the "
            + "image's /opt/shuffle-rdma/rdma-entrypoint.sh (conf-templates/kubernetes/image/)"
            : "") + "; or " + runtimeDefault
        : "docker run --cap-add=IPC_LOCK or --ulimit memlock=-1:-1");
  }

  private static String hex(HostFacts host, String set) {
    OptionalLong caps = host.capabilities(set);
    return caps.isPresent() ? String.format("%016x", caps.getAsLong()) : "unknown";
  }

  private boolean nativeLayer() {
    String platform = BundledLibrary.platformProblem();
    if (platform != null) {
      report.fail(platform, "run on linux-x86_64 or install a libdisni for this platform on "
          + "java.library.path");
      return false;
    }
    VerbsRuntime rt = runtime.get();
    if (rt.loaded()) {
      report.ok("native layer: " + rt.description());
      return true;
    }
    report.fail(rt.failure(), "library choice: -D" + LibraryChoice.PROPERTY + " / "
        + LibraryChoice.ENV + " = auto|bundled|system|<path>");
    return false;
  }

  private void odp(String ip) {
    try {
      Class<?> probe = Class.forName(VerbsClassNames.NATIVE_PROBE, true, runtime.get().loader());
      int caps = (Integer) probe.getMethod("odpSupport", String.class).invoke(null, ip);
      if (caps < 0) {
        report.info("on-demand paging (ODP): not supported by the device (not needed: map "
            + "outputs are registered explicitly)");
      } else {
        report.info("on-demand paging (ODP) for RC: " + ((caps & 8) != 0 ? "READ " : "")
            + ((caps & 4) != 0 ? "WRITE " : "") + ((caps & 1) != 0 ? "SEND " : "")
            + ((caps & 2) != 0 ? "RECV " : "") + "(caps 0x" + Integer.toHexString(caps) + ")");
      }
      String setting = conf.odp();
      try {
        boolean use = OdpChoice.use(setting, caps);
        report.info("map output registration (spark.shuffle.rdma.verbs.odp=" + setting + "): "
            + (use ? "on-demand paging, nothing pinned" : "pinned (memlock must cover the "
                + "executor's shuffle output)"));
      } catch (IllegalArgumentException e) {
        report.fail(e.getMessage(), "set spark.shuffle.rdma.verbs.odp=auto");
      }
    } catch (InvocationTargetException e) {
      report.warn("could not open the device through rdma_cm on " + ip + ": "
          + e.getCause().getMessage(), "check that " + ip + " belongs to the RDMA netdev");
    } catch (ReflectiveOperationException | RuntimeException e) {
      report.warn("ODP query failed: " + e, null);
    }
  }

  /** The device's RDMA READ depth maxima and the queue pairs per peer verbs would open. */
  private void readDepths(String ip, String deviceName) {
    try {
      Class<?> probe = Class.forName(VerbsClassNames.NATIVE_PROBE, true, runtime.get().loader());
      long packed = (Long) probe.getMethod("readDepths", String.class).invoke(null, ip);
      ReadDepth.Device device = ReadDepth.Device.decode(packed);
      report.info(depthLine(device));
      try {
        report.info(queuePairsLine(conf.queuePairsPerPeer(), deviceName, device));
      } catch (IllegalArgumentException e) {
        report.fail(e.getMessage(), "set spark.shuffle.rdma.verbs.queuePairsPerPeer=0");
      }
    } catch (InvocationTargetException e) {
      report.warn("could not query the device's READ depths through rdma_cm on " + ip + ": "
          + e.getCause().getMessage(), "check that " + ip + " belongs to the RDMA netdev");
    } catch (ReflectiveOperationException | RuntimeException e) {
      report.warn("READ depth query failed: " + e, null);
    }
  }

  static String depthLine(ReadDepth.Device d) {
    if (!d.known()) {
      return "RDMA READ depth: ibv_query_device failed; connections let librdmacm use the "
          + "device maxima";
    }
    return "RDMA READ depth: max_qp_init_rd_atom " + d.maxQpInitRdAtom + " (READs one queue "
        + "pair keeps outstanding), max_qp_rd_atom " + d.maxQpRdAtom + " (READs one queue pair "
        + "serves at once); each connection uses the lesser of the reader's and the server's";
  }

  static String queuePairsLine(int configured, String deviceName, ReadDepth.Device d) {
    int n = QueuePairStriping.perPeer(configured, deviceName, d.vendorId);
    return "queue pairs per peer: " + n + " (spark.shuffle.rdma.verbs.queuePairsPerPeer="
        + configured + (configured == 0 ? ": from the device, "
            + (QueuePairStriping.softwareDevice(deviceName, d.vendorId) ? "software" : "hardware")
            + " device " + deviceName : "") + ")";
  }

  private void softRoce(HostFacts host, RdmaSysfs sysfs) {
    List<String> devices = sysfs.devices();
    boolean hasRxe = devices.stream().anyMatch(d -> d.startsWith("rxe"));
    if (hasRxe) {
      report.info("Soft-RoCE (rdma_rxe) device present: fine for labs and CI, not for "
          + "performance");
    } else if (host.rxeAvailable()) {
      report.info("rdma_rxe is available for kernel " + host.kernelRelease() + ": Soft-RoCE "
          + "lab setup: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <eth>");
    } else {
      report.info("rdma_rxe is not available for kernel " + host.kernelRelease()
          + " (Soft-RoCE needs it: install the distribution's extra kernel modules, e.g. "
          + "linux-modules-extra-$(uname -r) on Ubuntu)");
    }
  }
}
