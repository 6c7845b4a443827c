/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.util.List;
import java.util.Optional;

/**
 * Picks the RDMA port and the IP address the verbs transport serves on, from
 * spark.shuffle.rdma.device ("", "dev" or "dev:port") and spark.shuffle.rdma.bindAddress.
 *
 * <p>With an empty bind address the address is the IPv4 of the netdev behind the chosen
 * port, never what the hostname resolves to: on hosts with a management NIC and an RDMA NIC
 * the hostname usually names the management one, and rdma_cm would then route through a
 * device that cannot do RDMA (or through the wrong RDMA port).
 */
public final class PortSelector {

  /**
   * A usable port and the address to bind, or why there is none (with the fix). A class,
   * not a record, for the Scala 2.12 compiler of the Spark 3.5 build (see RdmaPort).
   */
  public static final class Choice {
    private final RdmaPort port;
    private final String bindAddress;
    private final String problem;

    public Choice(RdmaPort port, String bindAddress, String problem) {
      this.port = port;
      this.bindAddress = bindAddress;
      this.problem = problem;
    }

    public RdmaPort port() {
      return port;
    }

    public String bindAddress() {
      return bindAddress;
    }

    public String problem() {
      return problem;
    }

    public boolean ok() {
      return problem == null;
    }

    @Override
    public String toString() {
      return "Choice[port=" + port + ", bindAddress=" + bindAddress + ", problem=" + problem
          + "]";
    }
  }

  private PortSelector() {}

  public static Choice choose(RdmaSysfs sysfs, NetdevAddresses addresses, String deviceSpec,
      String bindAddress) {
    if (!sysfs.hasRdmaClass() || sysfs.devices().isEmpty()) {
      return new Choice(null, null, "no RDMA device: " + sysfs.infinibandClass()
          + (sysfs.hasRdmaClass() ? " is empty" : " does not exist") + ". Load the driver "
          + "of your RDMA NIC (mlx5_ib, irdma, bnxt_re, ...) or, for a lab, Soft-RoCE: "
          + "'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <eth>'.");
    }
    String dev = deviceSpec == null ? "" : deviceSpec.trim();
    int wantedPort = 0;
    int colon = dev.indexOf(':');
    if (colon >= 0) {
      try {
        wantedPort = Integer.parseInt(dev.substring(colon + 1));
      } catch (NumberFormatException e) {
        return new Choice(null, null, "spark.shuffle.rdma.device='" + deviceSpec
            + "' is not 'device' or 'device:port' (e.g. mlx5_0:1).");
      }
      dev = dev.substring(0, colon);
    }
    List<RdmaPort> candidates = dev.isEmpty() ? sysfs.ports() : sysfs.ports(dev);
    if (!dev.isEmpty() && candidates.isEmpty()) {
      return new Choice(null, null, "spark.shuffle.rdma.device names " + dev
          + ", which is not among this host's RDMA devices " + sysfs.devices()
          + "; fix the setting or leave it empty to use the first ACTIVE port.");
    }
    RdmaPort chosen = null;
    for (RdmaPort p : candidates) {
      if ((wantedPort == 0 || p.port() == wantedPort) && p.isActive()) {
        chosen = p;
        break;
      }
    }
    if (chosen == null) {
      StringBuilder states = new StringBuilder();
      for (RdmaPort p : candidates) {
        states.append(states.length() == 0 ? "" : ", ").append(p.id()).append(' ')
            .append(p.state()).append('/').append(p.physState());
      }
      return new Choice(null, null, "no ACTIVE RDMA port" + (dev.isEmpty() ? "" : " on "
          + deviceSpec) + " (" + states + "). Bring the link up ('ip link set <netdev> up'; "
          + "on InfiniBand a subnet manager such as opensm must run, INIT means none did).");
    }
    if (bindAddress != null && !bindAddress.isEmpty()) {
      return new Choice(chosen, bindAddress, null);
    }
    for (String netdev : chosen.netdevs()) {
      Optional<String> ip = addresses.ipv4(netdev);
      if (ip.isPresent()) {
        return new Choice(chosen, ip.get(), null);
      }
    }
    return new Choice(chosen, null, "RDMA port " + chosen.id() + " has no netdev with an "
        + "IPv4 address (netdevs: " + chosen.netdevs() + "); rdma_cm needs one. Assign an "
        + "address ('ip addr add <ip>/<len> dev <netdev>') or set spark.shuffle.rdma.bindAddress.");
  }
}
