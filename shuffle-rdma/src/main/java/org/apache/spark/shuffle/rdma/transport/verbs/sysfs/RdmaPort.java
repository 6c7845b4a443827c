package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.util.List;

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
 */
public record RdmaPort(String device, int port, String state, String physState,
    String linkLayer, List<Gid> gids, List<String> netdevs) {

  /** A GID table entry: index, address text and type ("RoCE v2", "IB/RoCE v1", or ""). */
  public record Gid(int index, String address, String type) {
    /** RoCE v2 GIDs of IPv4 addresses are IPv4-mapped: ::ffff:a.b.c.d. */
    public boolean isIpv4Mapped() {
      return address.startsWith("0000:0000:0000:0000:0000:ffff:");
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
}
