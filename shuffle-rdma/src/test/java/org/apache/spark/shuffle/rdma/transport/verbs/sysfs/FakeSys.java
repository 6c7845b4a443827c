/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.sysfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds a fake /sys tree with the files RdmaSysfs reads. */
final class FakeSys {
  final Path root;

  FakeSys(Path root) {
    this.root = root;
  }

  FakeSys port(String dev, int port, String state, String phys, String linkLayer)
      throws IOException {
    Path p = root.resolve("class/infiniband").resolve(dev).resolve("ports/" + port);
    write(p.resolve("state"), state);
    write(p.resolve("phys_state"), phys);
    write(p.resolve("link_layer"), linkLayer);
    return this;
  }

  FakeSys gid(String dev, int port, int index, String gid, String type, String ndev)
      throws IOException {
    Path p = root.resolve("class/infiniband").resolve(dev).resolve("ports/" + port);
    write(p.resolve("gids/" + index), gid);
    write(p.resolve("gid_attrs/types/" + index), type);
    write(p.resolve("gid_attrs/ndevs/" + index), ndev);
    return this;
  }

  FakeSys pciNetdev(String dev, String netdev) throws IOException {
    Files.createDirectories(root.resolve("class/infiniband").resolve(dev)
        .resolve("device/net").resolve(netdev));
    return this;
  }

  FakeSys mtu(String netdev, int mtu) throws IOException {
    write(root.resolve("class/net").resolve(netdev).resolve("mtu"), Integer.toString(mtu));
    return this;
  }

  static void write(Path file, String content) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, content + "\n");
  }
}
