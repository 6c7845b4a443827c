/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PortSelectorTest {
  @TempDir
  Path tmp;

  private RdmaSysfs sysfs;
  private final NetdevAddresses net = n -> Optional.ofNullable(
      Map.of("ens1f0", "10.0.0.5", "ib0", "192.168.10.5").get(n));

  @BeforeEach
  void tree() throws IOException {
    new FakeSys(tmp)
        .port("mlx5_0", 1, "1: DOWN", "3: Disabled", "Ethernet")
        .gid("mlx5_0", 1, 0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", "eth9")
        .port("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "Ethernet")
        .gid("mlx5_1", 1, 0, "fe80:0000:0000:0000:0a00:00ff:fe00:0005", "IB/RoCE v1", "ens1f0")
        .gid("mlx5_1", 1, 3, "0000:0000:0000:0000:0000:ffff:0a00:0005", "RoCE v2", "ens1f0")
        .gid("mlx5_1", 1, 4, "0000:0000:0000:0000:0000:0000:0000:0000", "", "")
        .mtu("ens1f0", 9000)
        .port("mlx4_0", 1, "4: ACTIVE", "5: LinkUp", "InfiniBand")
        .port("mlx4_0", 2, "2: INIT", "5: LinkUp", "InfiniBand")
        .pciNetdev("mlx4_0", "ib0");
    sysfs = new RdmaSysfs(tmp);
  }

  @Test
  void readsPortsFromSysfs() {
    assertEquals(4, sysfs.ports().size());
    RdmaPort roce = sysfs.ports("mlx5_1").get(0);
    assertTrue(roce.isActive());
    assertTrue(roce.isEthernet());
    assertTrue(roce.hasRoceV2Ipv4Gid());
    assertEquals(2, roce.gids().size(), "the all-zero GID is an empty slot");
    assertEquals("ens1f0", roce.netdevs().get(0));
    assertEquals(9000, sysfs.netdevMtu("ens1f0").getAsInt());
    assertEquals("ib0", sysfs.ports("mlx4_0").get(0).netdevs().get(0));
  }

  @Test
  void defaultIsTheFirstActivePortAndItsNetdevAddress() {
    PortSelector.Choice c = PortSelector.choose(sysfs, net, "", "");
    assertTrue(c.ok(), c.problem());
    assertEquals("mlx4_0:1", c.port().id()); // devices sort: mlx4_0 before mlx5_1
    assertEquals("192.168.10.5", c.bindAddress());
  }

  @Test
  void deviceAndPortFromTheSetting() {
    PortSelector.Choice c = PortSelector.choose(sysfs, net, "mlx5_1", "");
    assertEquals("10.0.0.5", c.bindAddress());
    assertEquals("mlx5_1:1", c.port().id());
    PortSelector.Choice explicit = PortSelector.choose(sysfs, net, "mlx5_1:1", "10.9.9.9");
    assertEquals("10.9.9.9", explicit.bindAddress());
  }

  @Test
  void explainsWhatIsMissing() {
    PortSelector.Choice down = PortSelector.choose(sysfs, net, "mlx5_0", "");
    assertFalse(down.ok());
    assertTrue(down.problem().contains("no ACTIVE RDMA port"), down.problem());
    assertTrue(down.problem().contains("mlx5_0:1 DOWN/Disabled"), down.problem());
    PortSelector.Choice init = PortSelector.choose(sysfs, net, "mlx4_0:2", "");
    assertTrue(init.problem().contains("subnet manager"), init.problem());
    PortSelector.Choice unknown = PortSelector.choose(sysfs, net, "bnxt_re0", "");
    assertTrue(unknown.problem().contains("not among this host's RDMA devices"));
    PortSelector.Choice noIp = PortSelector.choose(sysfs, n -> Optional.empty(), "mlx5_1", "");
    assertTrue(noIp.problem().contains("no netdev with an IPv4 address"), noIp.problem());
    PortSelector.Choice none = PortSelector.choose(new RdmaSysfs(tmp.resolve("empty")), net, "", "");
    assertTrue(none.problem().contains("does not exist"), none.problem());
    assertTrue(none.problem().contains("rdma link add rxe0"), none.problem());
  }
}
