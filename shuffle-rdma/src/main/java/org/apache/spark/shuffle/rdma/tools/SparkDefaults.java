package org.apache.spark.shuffle.rdma.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The few spark.shuffle.rdma.* values the doctor needs, read from a spark-defaults.conf
 * without Spark (the doctor runs from the shaded jar alone). Defaults mirror RdmaConf;
 * SparkDefaultsTest checks that they stay equal.
 */
final class SparkDefaults {
  static final String DEVICE = "";
  static final String BIND_ADDRESS = "";
  static final String REGION_SIZE = "1g";
  static final String RECEIVE_POOL_SIZE = "128m";
  static final String TRANSPORT = "auto";
  static final String ODP = "auto";

  private final Map<String, String> values;

  private SparkDefaults(Map<String, String> values) {
    this.values = values;
  }

  static SparkDefaults empty() {
    return new SparkDefaults(new HashMap<>());
  }

  /** Parses "key value" / "key=value" lines; '#' starts a comment line. */
  static SparkDefaults read(Path file) throws IOException {
    Map<String, String> m = new HashMap<>();
    for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String line = raw.trim();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int sep = 0;
      while (sep < line.length() && !Character.isWhitespace(line.charAt(sep))
          && line.charAt(sep) != '=') {
        sep++;
      }
      String key = line.substring(0, sep);
      String value = sep < line.length() ? line.substring(sep + 1).trim() : "";
      if (value.startsWith("=")) {
        value = value.substring(1).trim();
      }
      m.put(key, value);
    }
    return new SparkDefaults(m);
  }

  String get(String key, String def) {
    return values.getOrDefault("spark.shuffle.rdma." + key, def);
  }

  String device() {
    return get("device", DEVICE);
  }

  String bindAddress() {
    return get("bindAddress", BIND_ADDRESS);
  }

  String transport() {
    return get("transport", TRANSPORT);
  }

  long regionSize() {
    return bytes(get("regionSize", REGION_SIZE));
  }

  /** spark.shuffle.rdma.verbs.odp: auto, true or false. */
  String odp() {
    return get("verbs.odp", ODP).trim().toLowerCase(Locale.ROOT);
  }

  long receivePoolSize() {
    return bytes(get("verbs.receivePoolSize", RECEIVE_POOL_SIZE));
  }

  /** Spark byte strings: 512, 64k, 128m, 1g (binary units, optional 'b'). */
  static long bytes(String s) {
    String v = s.trim().toLowerCase(Locale.ROOT);
    if (v.endsWith("b")) {
      v = v.substring(0, v.length() - 1);
    }
    long mult = 1;
    char last = v.isEmpty() ? '0' : v.charAt(v.length() - 1);
    switch (last) {
      case 'k': mult = 1L << 10; break;
      case 'm': mult = 1L << 20; break;
      case 'g': mult = 1L << 30; break;
      case 't': mult = 1L << 40; break;
      default: mult = 1;
    }
    if (mult != 1) {
      v = v.substring(0, v.length() - 1);
    }
    return Long.parseLong(v.trim()) * mult;
  }
}
