/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every spark-defaults template in conf-templates/ works on both Spark lines: Spark 4 loads
 * the jar through spark.jars (active), Spark 3.5 needs it on the driver's and executors'
 * class path before Spark loads spark.jars (both lines present, commented out, the same
 * path). A template with spark.jars alone makes every Spark 3.5 executor exit with
 * ClassNotFoundException.
 */
class ConfTemplatesTest {
  private static final org.apache.spark.internal.config.package$ SPARK =
      org.apache.spark.internal.config.package$.MODULE$;

  @Test
  void everyTemplateLoadsTheJarOnSpark4AndSpark35() throws IOException {
    List<Path> templates = templates();
    assertFalse(templates.isEmpty(), "no spark-defaults.*.conf in conf-templates/");
    for (Path t : templates) {
      Map<String, String> active = new HashMap<>();
      Map<String, String> commented = new HashMap<>();
      for (String line : Files.readAllLines(t, StandardCharsets.UTF_8)) {
        String[] kv = line.replaceFirst("^#", "").trim().split("\\s+", 2);
        if (kv.length == 2 && kv[0].startsWith("spark.")) {
          (line.startsWith("#") ? commented : active).put(kv[0], kv[1]);
        }
      }
      String jar = active.get(SPARK.JARS().key());
      assertNotNull(jar, t + ": no active " + SPARK.JARS().key() + " (Spark 4)");
      for (String key : List.of(SPARK.DRIVER_CLASS_PATH().key(),
          SPARK.EXECUTOR_CLASS_PATH().key())) {
        assertEquals(jar, commented.get(key), t + ": Spark 3.5 needs '#" + key + " " + jar
            + "' (commented, to uncomment instead of " + SPARK.JARS().key() + ")");
        assertFalse(active.containsKey(key), t + ": " + key + " active next to spark.jars");
      }
    }
  }

  private static List<Path> templates() throws IOException {
    Path dir = Paths.get(System.getProperty("project.root", "..")).resolve("conf-templates");
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("spark-defaults\\..*\\.conf"))
          .sorted().collect(Collectors.toList());
    }
  }
}
