/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A node service in the test's JVM on loopback tcp, its log kept in {@code log}. */
final class InProcessService {
  private InProcessService() {}

  /** Skips the calling test where libfdpass was not built (-Dnative.skip). */
  static NodeService start(Path socket, ByteArrayOutputStream log, String... extraArgs)
      throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"),
        "libfdpass not built");
    List<String> args = new ArrayList<>(List.of("--socket", socket.toString(), "--transport",
        "tcp", "--host", "127.0.0.1"));
    args.addAll(List.of(extraArgs));
    return new NodeService(ServiceArgs.parse(args.toArray(new String[0])), new ServiceLog(
        new PrintStream(log, true, StandardCharsets.UTF_8)));
  }

  static NodeService start(Path socket, String... extraArgs) throws Exception {
    return start(socket, new ByteArrayOutputStream(), extraArgs);
  }
}
