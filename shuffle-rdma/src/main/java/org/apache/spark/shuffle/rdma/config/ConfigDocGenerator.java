/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.spark.internal.config.ConfigEntry;

/**
 * Renders, from {@link RdmaConf#ALL()}, the single definition of every key: docs/configuration.md,
 * and the defaults file the doctor reads ({@link #DEFAULTS_RESOURCE}; the doctor runs under
 * {@code java -jar} without Spark, so it cannot evaluate the entries itself). Run with the
 * repository root to regenerate both; ConfigDocTest fails when either is stale.
 */
public final class ConfigDocGenerator {
  private ConfigDocGenerator() {}

  public static String render() {
    StringBuilder sb = new StringBuilder();
    sb.append("# Configuration\n\n")
        .append("<!-- Generated from RdmaConf.scala by ConfigDocGenerator; do not edit by hand. ")
        .append("Regenerate: bin/gen-config-doc -->\n\n")
        .append("Every key is validated when the shuffle manager starts: a bad value, or a key ")
        .append("under `spark.shuffle.rdma.` that is not listed here, fails the application at ")
        .append("startup with a message that names the key.\n\n")
        .append("| Key | Default | Meaning |\n|---|---|---|\n");
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      ConfigEntry<?> e = it.next();
      String def = e.defaultValue().isEmpty() ? "(unset)" : e.defaultValueString();
      sb.append("| `").append(e.key()).append("` | `")
          .append(def.isEmpty() ? "(empty)" : def).append("` | ")
          .append(e.doc().replace("|", "\\|")).append(" |\n");
    }
    return sb.toString();
  }

  /** Class-path name of the generated defaults, one {@code key=default} line per key. */
  public static final String DEFAULTS_RESOURCE =
      "org/apache/spark/shuffle/rdma/config/defaults.properties";

  /** The defaults file: every key with its default as Spark prints it (e.g. "1g", "120s"). */
  public static String renderDefaults() {
    StringBuilder sb = new StringBuilder();
    sb.append("# Generated from RdmaConf.scala by ConfigDocGenerator; do not edit by hand. ")
        .append("Regenerate: bin/gen-config-doc\n");
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      ConfigEntry<?> e = it.next();
      // A key without a default (unset means "leave it to the device") is written empty.
      sb.append(e.key()).append('=')
          .append(e.defaultValue().isEmpty() ? "" : e.defaultValueString()).append('\n');
    }
    return sb.toString();
  }

  public static Path docPath(Path root) {
    return root.resolve("docs").resolve("configuration.md");
  }

  public static Path defaultsPath(Path root) {
    return root.resolve("shuffle-rdma/src/main/resources").resolve(DEFAULTS_RESOURCE);
  }

  public static void main(String[] args) throws IOException {
    Path root = Paths.get(args.length > 0 ? args[0] : ".");
    write(docPath(root), render());
    write(defaultsPath(root), renderDefaults());
  }

  private static void write(Path out, String text) throws IOException {
    Files.createDirectories(out.getParent());
    Files.write(out, text.getBytes(StandardCharsets.UTF_8));
    System.out.println("wrote " + out);
  }
}
