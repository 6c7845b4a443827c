/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ready line docs/node-service.md shows is the one the service prints: the same fields in
 * the same order, and for a service started as the sample is (tcp, no cap, default lease) the
 * same transport, lease and cap values. Scripts and the YARN auxiliary service match this line.
 */
class ReadyLineDocTest {
  private static final Path DOC = Paths.get(System.getProperty("project.root", ".."))
      .resolve("docs/node-service.md");
  private static final Pattern FIELD = Pattern.compile("(?:^| )([a-z-]+)=(\\S+|\\[[^\\]]*\\])");
  /** Fields whose value the sample's command line fixes (the others depend on the host). */
  private static final List<String> FIXED = List.of("transport", "driver-timeout",
      "driver-gone-timeout", "max-registered-bytes", "app-max");

  /** The fields of a ready line, in order, with their values. */
  static Map<String, String> fields(String line) {
    String rest = line.substring(line.indexOf(NodeService.READY) + NodeService.READY.length());
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m = FIELD.matcher(rest);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  /** Every ready line docs/node-service.md shows. */
  static List<String> documented() throws Exception {
    List<String> lines = new ArrayList<>();
    for (String l : Files.readAllLines(DOC, StandardCharsets.UTF_8)) {
      if (l.contains(NodeService.READY + " ")) {
        lines.add(l);
      }
    }
    return lines;
  }

  @Test
  void theDocumentedReadyLineIsWhatTheServicePrints(@TempDir Path dir) throws Exception {
    List<String> documented = documented();
    assertFalse(documented.isEmpty(), DOC + " shows no ready line");
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    String printed;
    try (NodeService service = InProcessService.start(dir.resolve("s.sock"), log)) {
      printed = null;
      for (String l : log.toString(StandardCharsets.UTF_8).split("\n")) {
        if (l.startsWith(NodeService.READY)) {
          printed = l;
        }
      }
    }
    assertNotNull(printed, "the service printed no ready line: " + log);
    Map<String, String> actual = fields(printed);
    for (String line : documented) {
      Map<String, String> shown = fields(line);
      assertEquals(new ArrayList<>(actual.keySet()), new ArrayList<>(shown.keySet()),
          DOC + " shows a ready line with other fields than the service prints:\n  doc:     "
              + line.trim() + "\n  printed: " + printed);
      for (String f : FIXED) {
        assertEquals(actual.get(f), shown.get(f), DOC + ": the ready line's " + f
            + " differs from what a service started as shown (tcp, defaults) prints:\n  doc:"
            + "     " + line.trim() + "\n  printed: " + printed);
      }
    }
  }
}
