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

import org.apache.spark.shuffle.rdma.transport.verbs.VerbsPreflight;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostFactsTest {
  @TempDir
  Path tmp;

  @Test
  void containerMemoryLimitIsTheSmallestOnTheCgroupPath() throws IOException {
    HostFacts host = new HostFacts(tmp);
    assertFalse(host.containerMemoryLimit().isPresent(), "no /proc/self/cgroup: unknown");
    FakeSys.write(tmp.resolve("proc/self/cgroup"), "0::/kubepods/pod1/ctr");
    FakeSys.write(tmp.resolve("sys/fs/cgroup/memory.max"), "max");
    assertEquals(Long.MAX_VALUE, host.containerMemoryLimit().getAsLong(), "no limit anywhere");
    FakeSys.write(tmp.resolve("sys/fs/cgroup/kubepods/pod1/memory.max"), "4294967296");
    FakeSys.write(tmp.resolve("sys/fs/cgroup/kubepods/pod1/ctr/memory.max"), "max");
    assertEquals(4294967296L, host.containerMemoryLimit().getAsLong(), "the pod's limit");
    FakeSys.write(tmp.resolve("sys/fs/cgroup/kubepods/pod1/ctr/memory.max"), "1073741824");
    assertEquals(1073741824L, host.containerMemoryLimit().getAsLong(), "the container's");
    FakeSys.write(tmp.resolve("proc/self/cgroup"), "0::/../../etc");
    assertFalse(host.containerMemoryLimit().isPresent(), "a path out of the hierarchy");
  }

  @Test
  void memlockCapabilityAndSoftRoce() throws IOException {
    FakeSys.write(tmp.resolve("proc/self/limits"),
        "Limit                     Soft Limit           Hard Limit           Units\n"
        + "Max locked memory         65536                65536                bytes");
    FakeSys.write(tmp.resolve("proc/self/status"), "Name:\tjava\nCapEff:\t0000000000000000");
    FakeSys.write(tmp.resolve("proc/sys/kernel/osrelease"), "6.1.0-test");
    FakeSys.write(tmp.resolve("lib/modules/6.1.0-test/kernel/drivers/infiniband/sw/rxe/"
        + "rdma_rxe.ko.xz"), "");
    HostFacts host = new HostFacts(tmp);
    assertEquals(65536, host.memlockLimit().getAsLong());
    assertFalse(host.hasIpcLock());
    assertTrue(host.rxeAvailable());
    assertFalse(host.hasRdmaCmDevice());

    VerbsPreflight pf = new VerbsPreflight(new RdmaSysfs(tmp), host, n -> java.util.Optional.empty());
    String problem = pf.memlockProblem(1L << 30);
    assertTrue(problem.contains("memlock") && problem.contains("unlimited"), problem);
    assertTrue(pf.rdmaCmProblem().contains("modprobe rdma_ucm"));

    FakeSys.write(tmp.resolve("proc/self/status"), "CapEff:\t0000000000004000");
    assertTrue(host.hasIpcLock(), "bit 14 is CAP_IPC_LOCK");
    assertEquals(null, pf.memlockProblem(1L << 30));
  }

  @Test
  void kernelsBefore62PinReadOnlyRegistrationsAsWrites() throws IOException {
    HostFacts host = new HostFacts(tmp);
    Path release = tmp.resolve("proc/sys/kernel/osrelease");
    String[][] cases = {{"6.1.0-50-amd64", "true"}, {"5.14.0-427.el9.x86_64", "true"},
        {"4.18.0", "true"}, {"6.2.0", "false"}, {"6.8.0-45-generic", "false"},
        {"10.0.1", "false"}, {"garbage", "true"}};
    for (String[] c : cases) {
      FakeSys.write(release, c[0]);
      assertEquals(Boolean.parseBoolean(c[1]), host.pinsReadOnlyAsWrite(), c[0]);
    }
  }
}
