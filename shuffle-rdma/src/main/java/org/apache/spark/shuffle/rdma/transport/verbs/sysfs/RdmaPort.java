/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.util.List;
import java.util.Objects;

/**
 * One port of an RDMA device as sysfs describes it.
 *
 * @param device device name (mlx5_0, rxe0)
 * @param port port number (1-based)
 * @param state logical state name (ACTIVE, DOWN, INIT, ...)
 * @param physState physical state name (LinkUp, Disabled, ...)
 * @param linkLayer "InfiniBand" or "Ethernet" (RoCE, iWARP)
 * @param gids the non-zero GIDs with their type
 * @param netdevs network interfaces behind the port (RoCE: the Ethernet netdev; IB: IPoIB)
 *
 * <p>A value class written out rather than a {@code record}: the Scala 2.12 compiler, which
 * parses the Java sources of the Spark 3.5 / Scala 2.12 build, does not know records.
 */
public final class RdmaPort {
  private final String device;
  private final int port;
  private final String state;
  private final String physState;
  private final String linkLayer;
  private final List<Gid> gids;
  private final List<String> netdevs;

  public RdmaPort(String device, int port, String state, String physState, String linkLayer,
      List<Gid> gids, List<String> netdevs) {
    this.device = device;
    this.port = port;
    this.state = state;
    this.physState = physState;
    this.linkLayer = linkLayer;
    this.gids = gids;
    this.netdevs = netdevs;
  }

  public String device() {
    return device;
  }

  public int port() {
    return port;
  }

  public String state() {
    return state;
  }

  public String physState() {
    return physState;
  }

  public String linkLayer() {
    return linkLayer;
  }

  public List<Gid> gids() {
    return gids;
  }

  public List<String> netdevs() {
    return netdevs;
  }

  /** A GID table entry: index, address text and type ("RoCE v2", "IB/RoCE v1", or ""). */
  public static final class Gid {
    private final int index;
    private final String address;
    private final String type;

    public Gid(int index, String address, String type) {
      this.index = index;
      this.address = address;
      this.type = type;
    }

    public int index() {
      return index;
    }

    public String address() {
      return address;
    }

    public String type() {
      return type;
    }

    /** RoCE v2 GIDs of IPv4 addresses are IPv4-mapped: ::ffff:a.b.c.d. */
    public boolean isIpv4Mapped() {
      return address.startsWith("0000:0000:0000:0000:0000:ffff:");
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Gid)) {
        return false;
      }
      Gid g = (Gid) o;
      return index == g.index && Objects.equals(address, g.address)
          && Objects.equals(type, g.type);
    }

    @Override
    public int hashCode() {
      return Objects.hash(index, address, type);
    }

    @Override
    public String toString() {
      return "Gid[index=" + index + ", address=" + address + ", type=" + type + "]";
    }
  }

  public boolean isActive() {
    return "ACTIVE".equals(state);
  }

  public boolean isEthernet() {
    return "Ethernet".equalsIgnoreCase(linkLayer);
  }

  public boolean hasRoceV2Ipv4Gid() {
    return gids.stream().anyMatch(g -> g.type().equals("RoCE v2") && g.isIpv4Mapped());
  }

  /** "mlx5_0:1". */
  public String id() {
    return device + ":" + port;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof RdmaPort)) {
      return false;
    }
    RdmaPort p = (RdmaPort) o;
    return port == p.port && Objects.equals(device, p.device) && Objects.equals(state, p.state)
        && Objects.equals(physState, p.physState) && Objects.equals(linkLayer, p.linkLayer)
        && Objects.equals(gids, p.gids) && Objects.equals(netdevs, p.netdevs);
  }

  @Override
  public int hashCode() {
    return Objects.hash(device, port, state, physState, linkLayer, gids, netdevs);
  }

  @Override
  public String toString() {
    return "RdmaPort[device=" + device + ", port=" + port + ", state=" + state + ", physState="
        + physState + ", linkLayer=" + linkLayer + ", gids=" + gids + ", netdevs=" + netdevs
        + "]";
  }
}
