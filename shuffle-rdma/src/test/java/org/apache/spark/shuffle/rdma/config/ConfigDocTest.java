/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.spark.internal.config.ConfigEntry;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md and the doctor's defaults file must be exactly what RdmaConf renders:
 * keys are defined once.
 */
class ConfigDocTest {

  @Test
  void generatedDocIsCurrent() throws Exception {
    Path root = Paths.get(System.getProperty("project.root", ".."));
    assertCurrent(ConfigDocGenerator.docPath(root), ConfigDocGenerator.render());
  }

  /** The doctor's defaults (it runs without Spark) are rendered from the same entries. */
  @Test
  void generatedDefaultsAreCurrent() throws Exception {
    Path root = Paths.get(System.getProperty("project.root", ".."));
    assertCurrent(ConfigDocGenerator.defaultsPath(root), ConfigDocGenerator.renderDefaults());
  }

  private static void assertCurrent(Path file, String expected) throws Exception {
    assertTrue(Files.exists(file), "missing " + file + "; run bin/gen-config-doc");
    assertEquals(expected, new String(Files.readAllBytes(file), StandardCharsets.UTF_8),
        file + " is stale; run bin/gen-config-doc");
  }

  @Test
  void everyKeyHasDocAndPrefix() {
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      ConfigEntry<?> e = it.next();
      assertTrue(e.key().startsWith(RdmaConf.PREFIX()), e.key());
      assertTrue(e.doc().length() > 20, "undocumented key " + e.key());
    }
  }
}
