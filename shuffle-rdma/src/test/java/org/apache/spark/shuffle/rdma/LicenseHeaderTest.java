/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every source file and script of the project carries the licence header (Apache-2.0, as
 * SPDX identifier: LICENSE holds the text), in its first lines.
 */
class LicenseHeaderTest {
  static final String MARK = "SPDX-License-Identifier: Apache-2.0";
  private static final String[] DIRS = {"shuffle-rdma/src", "integration-tests", "bin", ".ci",
      "conf-templates"};

  @Test
  void everySourceFileHasTheHeader() throws IOException {
    Path root = Paths.get(System.getProperty("project.root", ".."));
    List<String> missing = new ArrayList<>();
    int checked = 0;
    for (String d : DIRS) {
      try (Stream<Path> s = Files.walk(root.resolve(d))) {
        for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
          if (p.toString().contains("/target/") || !isSource(p)) {
            continue;
          }
          checked++;
          if (!head(p).contains(MARK)) {
            missing.add(root.relativize(p).toString());
          }
        }
      }
    }
    assertTrue(checked > 150, "too few files checked: " + checked);
    assertEquals(List.of(), missing, "files without '" + MARK + "' in their first lines");
  }

  private static boolean isSource(Path p) throws IOException {
    String n = p.getFileName().toString();
    if (n.endsWith(".java") || n.endsWith(".scala") || n.endsWith(".c") || n.endsWith(".h")
        || n.endsWith(".sh") || n.endsWith(".py") || n.equals("Dockerfile")) {
      return true;
    }
    return !n.contains(".") && head(p).startsWith("#!");
  }

  private static String head(Path p) throws IOException {
    byte[] b = Files.readAllBytes(p);
    return new String(b, 0, Math.min(b.length, 600), StandardCharsets.UTF_8);
  }
}
