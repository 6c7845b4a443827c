/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.util.OptionalLong;

import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.HostFacts;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.NetdevAddresses;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.PortSelector;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.RdmaSysfs;

/**
 * The checks that decide whether the verbs transport can start here, cheapest first, each
 * failing with one sentence that says what is missing and how to fix it. Plain Java (no
 * Spark), shared by the provider and the doctor.
 */
public final class VerbsPreflight {
  private final RdmaSysfs sysfs;
  private final HostFacts host;
  private final NetdevAddresses addresses;

  public VerbsPreflight(RdmaSysfs sysfs, HostFacts host, NetdevAddresses addresses) {
    this.sysfs = sysfs;
    this.host = host;
    this.addresses = addresses;
  }

  public static VerbsPreflight forHost() {
    return new VerbsPreflight(RdmaSysfs.host(), HostFacts.host(), NetdevAddresses.host());
  }

  /** Device, port and address; the problem says what is missing. */
  public PortSelector.Choice port(String deviceSpec, String bindAddress) {
    return PortSelector.choose(sysfs, addresses, deviceSpec, bindAddress);
  }

  /**
   * Null when {@code bytes} (what the transport registers at least: receive pool plus one
   * region) can be locked; else the problem and the fix.
   */
  public String memlockProblem(long bytes) {
    if (host.hasIpcLock()) {
      return null;
    }
    OptionalLong limit = host.memlockLimit();
    if (limit.isEmpty() || limit.getAsLong() >= bytes) {
      return null;
    }
    return "the locked-memory limit (memlock) is " + limit.getAsLong() + " bytes but RDMA "
        + "registration needs at least " + bytes + " (receive pool + one region); set it to "
        + "unlimited for the executor: 'ulimit -l unlimited', '* - memlock unlimited' in "
        + "/etc/security/limits.conf, LimitMEMLOCK=infinity for systemd units, or "
        + "'--ulimit memlock=-1' for containers.";
  }

  /** Null when the kernel's rdma_cm device node exists. */
  public String rdmaCmProblem() {
    if (host.hasRdmaCmDevice()) {
      return null;
    }
    return "/dev/infiniband/rdma_cm is missing; load the RDMA-CM user-space module "
        + "('modprobe rdma_ucm ib_uverbs') or, in a container, pass the /dev/infiniband devices.";
  }

  public RdmaSysfs sysfs() {
    return sysfs;
  }

  public HostFacts host() {
    return host;
  }
}
