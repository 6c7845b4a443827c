/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;

import org.apache.spark.shuffle.rdma.config.ConfigDocGenerator;

/**
 * The spark.shuffle.rdma.* values the doctor needs, read from a spark-defaults.conf without
 * Spark (the doctor runs from the shaded jar alone, so it cannot evaluate RdmaConf's entries).
 * Defaults come from the file ConfigDocGenerator renders from RdmaConf into the jar, so a key
 * and its default are still stated once; asking for a key RdmaConf does not define fails.
 */
final class SparkDefaults {
  private static final String PREFIX = "spark.shuffle.rdma.";
  private static final Properties DEFAULTS = loadDefaults();

  private final Map<String, String> values;

  private SparkDefaults(Map<String, String> values) {
    this.values = values;
  }

  static SparkDefaults empty() {
    return new SparkDefaults(new HashMap<>());
  }

  private static Properties loadDefaults() {
    Properties p = new Properties();
    try (InputStream in = SparkDefaults.class.getClassLoader()
        .getResourceAsStream(ConfigDocGenerator.DEFAULTS_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(ConfigDocGenerator.DEFAULTS_RESOURCE
            + " is missing from the jar; rebuild it (bin/gen-config-doc regenerates the file)");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }

  /**
   * Spark's own spark.executor.memory. Spelled here, not read from Spark's ConfigEntry, because
   * the doctor runs under java -jar with no Spark on the class path; a test holds it equal to
   * Spark's entry.
   */
  static final String EXECUTOR_MEMORY = "spark.executor.memory";

  /** spark.shuffle.rdma.verbs.trafficClass, without the prefix. */
  static final String TRAFFIC_CLASS = "verbs.trafficClass";

  /** The full name of a key RdmaConf defines ({@code key} without the prefix). */
  static String fullKey(String key) {
    defaultOf(key);
    return PREFIX + key;
  }

  /** The default of a key as RdmaConf states it; {@code key} is without the prefix. */
  static String defaultOf(String key) {
    String v = DEFAULTS.getProperty(PREFIX + key);
    if (v == null) {
      throw new IllegalArgumentException(PREFIX + key + " is not a key RdmaConf defines");
    }
    return v;
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

  /** The configured value of a key (without the prefix), else its default. */
  String get(String key) {
    String def = defaultOf(key);
    return values.getOrDefault(PREFIX + key, def);
  }

  String device() {
    return get("device");
  }

  String bindAddress() {
    return get("bindAddress");
  }

  long regionSize() {
    return bytes(get("regionSize"));
  }

  /** spark.shuffle.rdma.verbs.odp: auto, true or false. */
  String odp() {
    return get("verbs.odp").trim().toLowerCase(Locale.ROOT);
  }

  /** spark.shuffle.rdma.verbs.queuePairsPerPeer (0: from the device). */
  int queuePairsPerPeer() {
    return Integer.parseInt(get("verbs.queuePairsPerPeer").trim());
  }

  /**
   * spark.shuffle.rdma.verbs.trafficClass: empty when unset (its default is none); a value
   * the transport would refuse at startup fails here too, naming the key.
   */
  OptionalInt trafficClass() {
    String key = TRAFFIC_CLASS;
    String v = get(key).trim();
    if (v.isEmpty() && !values.containsKey(PREFIX + key)) {
      return OptionalInt.empty();
    }
    try {
      int tos = Integer.parseInt(v);
      if (tos >= 0 && tos <= 255) {
        return OptionalInt.of(tos);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(PREFIX + key + " must be a ToS byte in [0, 255] "
        + "(decimal, DSCP << 2 | ECN), but was '" + v + "'");
  }

  /** spark.shuffle.rdma.maxRegisteredBytes (0: no cap). */
  long maxRegisteredBytes() {
    return bytes(get("maxRegisteredBytes"));
  }

  /**
   * A Spark size setting in this file, whose plain numbers are MiB (spark.executor.memory,
   * spark.executor.memoryOverhead); empty when the file does not set it.
   */
  OptionalLong sparkMebibytes(String fullKey) {
    String v = values.get(fullKey);
    if (v == null || v.trim().isEmpty()) {
      return OptionalLong.empty();
    }
    String t = v.trim();
    return OptionalLong.of(Character.isDigit(t.charAt(t.length() - 1))
        ? Long.parseLong(t) << 20 : bytes(t));
  }

  long receivePoolSize() {
    return bytes(get("verbs.receivePoolSize"));
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
