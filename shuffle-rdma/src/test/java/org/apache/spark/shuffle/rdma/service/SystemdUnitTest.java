/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * conf-templates/systemd/shuffle-rdma-service.service: its ExecStart parses with the
 * service's own argument parser, the socket lies in the directory systemd creates for it,
 * SIGTERM's exit status counts as success, and systemd itself (systemd-analyze verify, where
 * installed) finds nothing wrong: no unknown or misspelled key, no bad value.
 */
class SystemdUnitTest {
  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."))
      .toAbsolutePath().normalize();
  private static final Path UNIT = ROOT.resolve(
      "conf-templates/systemd/shuffle-rdma-service.service");

  @TempDir
  Path tmp;

  /** The [Service] section's keys (a repeated key keeps its last value). */
  private static Map<String, String> service() throws Exception {
    Map<String, String> keys = new LinkedHashMap<>();
    String section = "";
    for (String line : Files.readAllLines(UNIT, StandardCharsets.UTF_8)) {
      String t = line.trim();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      if (t.startsWith("[")) {
        section = t;
      } else if (section.equals("[Service]")) {
        int eq = t.indexOf('=');
        keys.put(t.substring(0, eq), t.substring(eq + 1));
      }
    }
    return keys;
  }

  @Test
  void execStartParsesAndItsSocketIsInTheRuntimeDirectory() throws Exception {
    Map<String, String> s = service();
    List<String> exec = Arrays.asList(s.get("ExecStart").split(" +"));
    assertEquals("/opt/shuffle-rdma/bin/shuffle-rdma-service", exec.get(0));
    ServiceArgs args = ServiceArgs.parse(exec.subList(1, exec.size()).toArray(new String[0]));
    assertEquals(Paths.get("/run", s.get("RuntimeDirectory")),
        Paths.get(args.socket.toString()).getParent(), "socket " + args.socket);
    // auto, as the executors' own default: verbs where it opens (the RoCE and InfiniBand
    // templates force verbs on the executors, which hand over only to a service on the
    // transport they read with), else tcp.
    assertEquals("auto", args.transport);
    // SIGTERM ends the JVM with 128 + 15 after its shutdown hook released everything
    // (ServiceProcessTest); systemd must not count that as a failure.
    assertTrue(Arrays.asList(s.get("SuccessExitStatus").split(" ")).contains("143"),
        s.toString());
    assertEquals("SIGTERM", s.get("KillSignal"));
  }

  private List<String> verify(String unitText) throws Exception {
    Path unit = tmp.resolve("shuffle-rdma-service.service");
    // verify checks that ExecStart's command exists: the repository's launcher stands in.
    Files.writeString(unit, unitText.replace("/opt/shuffle-rdma/bin/shuffle-rdma-service",
        ROOT.resolve("bin/shuffle-rdma-service").toString()));
    Process p = new ProcessBuilder("systemd-analyze", "verify", "--man=no", unit.toString())
        .redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "systemd-analyze verify did not finish");
    List<String> out = new ArrayList<>();
    for (String l : new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
        .split("\n")) {
      if (!l.isBlank()) {
        out.add(l);
      }
    }
    if (p.exitValue() != 0) {
      out.add("exit " + p.exitValue());
    }
    return out;
  }

  @Test
  void systemdFindsNothingWrongAndWouldCatchAMisspelledKey() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Paths.get("/usr/bin/systemd-analyze")),
        "systemd-analyze is not installed");
    String text = Files.readString(UNIT, StandardCharsets.UTF_8);
    assertEquals(List.of(), verify(text));
    List<String> misspelled = verify(text.replace("\nRestart=", "\nRestrt="));
    assertTrue(misspelled.stream().anyMatch(l -> l.contains("Unknown key")), misspelled
        .toString());
  }
}
