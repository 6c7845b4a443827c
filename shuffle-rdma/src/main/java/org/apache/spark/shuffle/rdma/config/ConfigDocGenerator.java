package org.apache.spark.shuffle.rdma.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.spark.internal.config.ConfigEntry;

/**
 * Renders docs/configuration.md from {@link RdmaConf#ALL()}, the single definition of every
 * key. Run with the output path to regenerate; ConfigDocTest fails when the file is stale.
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
      String def = e.defaultValueString();
      sb.append("| `").append(e.key()).append("` | `")
          .append(def.isEmpty() ? "(empty)" : def).append("` | ")
          .append(e.doc().replace("|", "\\|")).append(" |\n");
    }
    return sb.toString();
  }

  public static void main(String[] args) throws IOException {
    Path out = Paths.get(args.length > 0 ? args[0] : "docs/configuration.md");
    Files.write(out, render().getBytes(StandardCharsets.UTF_8));
    System.out.println("wrote " + out);
  }
}
