package org.apache.spark.shuffle.rdma.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.spark.internal.config.ConfigEntry;
import org.junit.jupiter.api.Test;

/** docs/configuration.md must be exactly what RdmaConf renders: keys are defined once. */
class ConfigDocTest {

  @Test
  void generatedDocIsCurrent() throws Exception {
    Path doc = Paths.get(System.getProperty("project.root", ".."), "docs", "configuration.md");
    assertTrue(Files.exists(doc), "missing " + doc + "; run bin/gen-config-doc");
    assertEquals(ConfigDocGenerator.render(),
        new String(Files.readAllBytes(doc), StandardCharsets.UTF_8),
        "docs/configuration.md is stale; run bin/gen-config-doc");
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
