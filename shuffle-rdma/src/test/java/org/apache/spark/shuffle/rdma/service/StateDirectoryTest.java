/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node service's state directory: refused when others may write it or another uid owns
 * it; on another filesystem than the shuffle files (EXDEV) an output is served but not kept,
 * saying so; an output whose link went missing is dropped from the state at the next start.
 */
class StateDirectoryTest {
  private static final String APP = "app-state";

  @TempDir
  Path work;

  @Test
  void refusedWhenOthersMayWriteItOrAnotherUidOwnsIt() throws Exception {
    Path socket = work.resolve("s.sock");
    Path state = work.resolve("s.sock.state");
    Files.createDirectory(state);
    Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwxrwx---"));
    IOException writable = assertThrows(IOException.class,
        () -> InProcessService.start(socket).close());
    assertTrue(writable.getMessage().contains("writable by its group or others"),
        writable.getMessage());
    assertFalse(Files.exists(socket), "a refused start leaves no socket");
    Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
    if ((Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid") == 0) {
      Files.setAttribute(state, "unix:uid", 4321);
      IOException owned = assertThrows(IOException.class,
          () -> InProcessService.start(socket).close());
      assertTrue(owned.getMessage().contains("owned by uid 4321"), owned.getMessage());
      Files.setAttribute(state, "unix:uid", 0);
    }
    InProcessService.start(socket).close();
    // Absent: created, for this uid only.
    Path other = work.resolve("fresh").resolve("state");
    InProcessService.start(socket, "--state-dir", other.toString()).close();
    assertEquals("rwx------", PosixFilePermissions.toString(
        Files.getPosixFilePermissions(other)));
  }

  @Test
  void onAnotherFilesystemAnOutputIsServedButNotKept() throws Exception {
    Path shm = Paths.get("/dev/shm");
    Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm)
        && !Files.getFileStore(shm).equals(Files.getFileStore(work)),
        "needs /dev/shm on another filesystem than " + work);
    Path state = Files.createTempDirectory(shm, "state-test");
    try {
      Path socket = work.resolve("s.sock");
      MapOutputFiles out = new MapOutputFiles(work, 0, 1, new int[] {100, 200}, 6);
      ByteArrayOutputStream log = new ByteArrayOutputStream();
      try (NodeService s = InProcessService.start(socket, log, "--state-dir",
              state.toString());
          HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        HandOverAnswer a = client.handOver(APP, 0, 1, 2, out.data, out.index, null,
            ChecksumAlgorithm.NONE);
        assertFalse(a.isRefused(), String.valueOf(a.refusal()));
        assertEquals(1, client.stats().outputs(), "served");
      }
      String text = log.toString(StandardCharsets.UTF_8);
      assertTrue(text.contains("is served but NOT kept across a restart")
          && text.contains("errno 18") && text.contains("--state-dir there"), text);
      try (Stream<Path> links = Files.list(state.resolve(DurableOutputs.LINKS))) {
        assertEquals(0, links.count(), "no partial link left");
      }
      try (NodeService s = InProcessService.start(socket, "--state-dir", state.toString());
          HandOverClient client = HandOverClient.connect(socket, 30_000)) {
        assertEquals(0, client.stats().outputs(), "nothing came back");
      }
    } finally {
      try (Stream<Path> all = Files.walk(state)) {
        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Test
  void anOutputWhoseLinkWentMissingIsDroppedAtTheNextStart() throws Exception {
    Path socket = work.resolve("s.sock");
    MapOutputFiles one = new MapOutputFiles(work, 0, 1, new int[] {100}, 7);
    MapOutputFiles two = new MapOutputFiles(work, 0, 2, new int[] {300}, 8);
    try (NodeService s = InProcessService.start(socket);
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      for (MapOutputFiles o : new MapOutputFiles[] {one, two}) {
        long map = o == one ? 1 : 2;
        assertFalse(client.handOver(APP, 0, map, 1, o.data, o.index, null,
            ChecksumAlgorithm.NONE).isRefused());
      }
    } // closed as on SIGTERM: kept
    Path links = work.resolve("s.sock.state").resolve(DurableOutputs.LINKS);
    Files.delete(links.resolve("o1.data"));
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    try (NodeService s = InProcessService.start(socket, log);
        HandOverClient client = HandOverClient.connect(socket, 30_000)) {
      assertEquals(1, client.stats().outputs());
    }
    assertTrue(log.toString(StandardCharsets.UTF_8).contains(APP + " shuffle 0 map 1 cannot "
        + "be served again, dropped"), log.toString(StandardCharsets.UTF_8));
    try (Stream<Path> left = Files.list(links)) {
      assertEquals(2, left.count(), "the dropped output's index link went with it");
    }
  }
}
