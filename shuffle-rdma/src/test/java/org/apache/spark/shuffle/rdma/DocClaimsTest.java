/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.spark.internal.config.ConfigEntry;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.service.yarn.YarnServiceKeys;
import org.junit.jupiter.api.Test;

/**
 * What the README, docs/*.md and conf-templates/ say about keys and metrics stays what the code
 * defines: every {@code spark.shuffle.rdma.*} key they name exists (in RdmaConf, or for the
 * NodeManager's keys in YarnServiceKeys), every default they quote for one (in a table's
 * "default" column, or as {@code `key` (5 s} / {@code `key` (default 0}) is the key's default,
 * and every metric name docs/metrics.md and the README quote is one RdmaMetrics defines, with
 * the Prometheus suffix of its kind. docs/configuration.md and the metrics table are generated
 * (ConfigDocTest, MetricsCatalogTest); this covers the prose written by hand around them. The
 * node service's ready line is checked by service.ReadyLineDocTest.
 */
class DocClaimsTest {
  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."));

  /** A key: not part of a longer dotted name (a class name like org.apache.spark.shuffle...). */
  private static final Pattern KEY = Pattern.compile("(?<![A-Za-z0-9_./-])"
      + "spark\\.shuffle\\.rdma\\.([A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z][A-Za-z0-9_]*)*)");
  /** Placeholders the docs use for "any key" ({@code --conf spark.shuffle.rdma.KEY=VALUE}). */
  private static final List<String> PLACEHOLDERS = List.of("KEY");
  /** {@code `key` (5 s}, {@code `key` (default 0}, {@code `key` (16,384}: a quoted default. */
  private static final Pattern PAREN_DEFAULT = Pattern.compile(
      "`spark\\.shuffle\\.rdma\\.([A-Za-z0-9_.]+)` \\((?:default:? )?`?([0-9][0-9,]*(?:\\.[0-9]+)?"
          + "(?: ?(?:ms|s|min|minutes?|seconds?|h|hours?|k|m|g|KiB|MiB|GiB|B))?)(?![A-Za-z0-9])");
  /** A metric name as the docs write it: source-relative, dotted. */
  private static final Pattern METRIC = Pattern.compile(
      "(?<![A-Za-z0-9_./-])((?:transport|reader|registry|metadata)\\.[a-z][A-Za-z]*)");
  /** A metric as Spark's PrometheusServlet names it. */
  private static final Pattern PROMETHEUS = Pattern.compile(
      "_(rdmaShuffle|rdmaShuffleCluster)_([A-Za-z0-9_]+?)_(Count|Value)\\b");

  /** Every key the code defines, with its default as ConfigDocGenerator writes it. */
  private static Map<String, String> definedKeys() throws IllegalAccessException {
    Map<String, String> keys = new TreeMap<>();
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      ConfigEntry<?> e = it.next();
      keys.put(e.key(), e.defaultValue().isEmpty() ? null : e.defaultValueString());
    }
    // The NodeManager's keys (docs/node-service.md, YARN): defined in YarnServiceKeys.
    for (Field f : YarnServiceKeys.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class
          && !f.getName().equals("PREFIX")) {
        String key = (String) f.get(null);
        String def = null;
        try {
          def = YarnServiceKeys.class.getField(f.getName() + "_DEFAULT_MS").getLong(null) + "ms";
        } catch (NoSuchFieldException none) {
          // no default in code
        }
        keys.put(key, def);
      }
    }
    return keys;
  }

  /** README.md, docs/*.md and every text file under conf-templates/. */
  private static List<Path> docs() throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(ROOT.resolve("README.md"));
    try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    try (Stream<Path> s = Files.walk(ROOT.resolve("conf-templates"))) {
      s.filter(Files::isRegularFile).sorted().forEach(files::add);
    }
    return files;
  }

  private static String read(Path p) throws IOException {
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(
          java.nio.ByteBuffer.wrap(Files.readAllBytes(p))).toString();
    } catch (CharacterCodingException binary) {
      return "";
    }
  }

  private static int line(String text, int offset) {
    int n = 1;
    for (int i = 0; i < offset; i++) {
      if (text.charAt(i) == '\n') {
        n++;
      }
    }
    return n;
  }

  private static String where(Path file, String text, int offset) {
    return ROOT.relativize(file) + ":" + line(text, offset);
  }

  @Test
  void everyKeyTheDocsNameIsDefined() throws Exception {
    Map<String, String> defined = definedKeys();
    List<String> unknown = new ArrayList<>();
    int seen = 0;
    for (Path f : docs()) {
      String text = read(f);
      Matcher m = KEY.matcher(text);
      while (m.find()) {
        seen++;
        String key = "spark.shuffle.rdma." + m.group(1);
        if (!defined.containsKey(key) && !PLACEHOLDERS.contains(m.group(1))) {
          unknown.add(where(f, text, m.start()) + " " + key);
        }
      }
    }
    assertTrue(seen > 100, "found only " + seen + " keys in the docs: is the pattern broken?");
    assertTrue(unknown.isEmpty(), "keys the docs name that RdmaConf (or YarnServiceKeys) does "
        + "not define; Spark refuses unknown spark.shuffle.rdma.* keys at startup:\n  "
        + String.join("\n  ", unknown));
  }

  @Test
  void everyDefaultTheDocsQuoteIsTheDefault() throws Exception {
    Map<String, String> defined = definedKeys();
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Path f : docs()) {
      if (!f.toString().endsWith(".md")) {
        continue; // templates set values, they do not quote defaults
      }
      String text = read(f);
      Matcher m = PAREN_DEFAULT.matcher(text);
      while (m.find()) {
        String key = "spark.shuffle.rdma." + m.group(1);
        if (!defined.containsKey(key)) {
          continue; // reported by everyKeyTheDocsNameIsDefined
        }
        checked++;
        if (!sameValue(m.group(2), defined.get(key))) {
          wrong.add(where(f, text, m.start()) + " " + key + ": the docs say " + m.group(2)
              + ", the default is " + defined.get(key));
        }
      }
      checked += checkTables(f, text, defined, wrong);
    }
    assertTrue(checked > 40, "checked only " + checked + " quoted defaults: is a pattern broken?");
    assertTrue(wrong.isEmpty(), "defaults the docs quote that are not the code's:\n  "
        + String.join("\n  ", wrong));
  }

  /** Rows of Markdown tables with a "default" column whose first cell is a quoted key. */
  private static int checkTables(Path f, String text, Map<String, String> defined,
      List<String> wrong) {
    int checked = 0;
    int defaultColumn = -1;
    String[] lines = text.split("\n", -1);
    int offset = 0;
    for (int i = 0; i < lines.length; offset += lines[i].length() + 1, i++) {
      String l = lines[i].trim();
      if (!l.startsWith("|")) {
        defaultColumn = -1;
        continue;
      }
      List<String> cells = cells(l);
      if (i + 1 < lines.length && lines[i + 1].trim().startsWith("|---")) {
        defaultColumn = -1;
        for (int c = 0; c < cells.size(); c++) {
          if (cells.get(c).toLowerCase(Locale.ROOT).equals("default")) {
            defaultColumn = c;
          }
        }
        continue;
      }
      if (defaultColumn < 0 || cells.size() <= defaultColumn) {
        continue;
      }
      Matcher key = Pattern.compile("^`(spark\\.shuffle\\.rdma\\.[A-Za-z0-9_.]+)`$")
          .matcher(cells.get(0));
      Matcher value = Pattern.compile("^`([^`]*)`$").matcher(cells.get(defaultColumn));
      if (key.find() && value.find() && defined.containsKey(key.group(1))) {
        checked++;
        String quoted = value.group(1);
        String def = defined.get(key.group(1));
        boolean same = quoted.equals("(unset)") ? def == null
            : quoted.equals("(empty)") ? "".equals(def) : sameValue(quoted, def);
        if (!same) {
          wrong.add(where(f, text, offset) + " " + key.group(1) + ": the table says " + quoted
              + ", the default is " + def);
        }
      }
    }
    return checked;
  }

  private static List<String> cells(String row) {
    String inner = row.length() < 2 ? ""
        : row.substring(1, row.endsWith("|") ? row.length() - 1 : row.length());
    List<String> cells = new ArrayList<>();
    for (String c : inner.split("(?<!\\\\)\\|", -1)) {
      cells.add(c.trim());
    }
    return cells;
  }

  /** The same value as Spark reads it: as written, else as a time, else as a size. */
  static boolean sameValue(String quoted, String def) {
    if (def == null) {
      return false;
    }
    String q = quoted.replace(",", "").replace(" ", "")
        .replaceAll("(minutes?)$", "min").replaceAll("(seconds?)$", "s")
        .replaceAll("(hours?)$", "h").replaceAll("([kmg])iB$", "$1")
        .replaceAll("KiB$", "k").replaceAll("MiB$", "m").replaceAll("GiB$", "g");
    if (q.equals(def)) {
      return true;
    }
    try {
      return JavaUtils.timeStringAsMs(q) == JavaUtils.timeStringAsMs(def);
    } catch (RuntimeException notTime) {
      // next
    }
    try {
      return JavaUtils.byteStringAsBytes(q) == JavaUtils.byteStringAsBytes(def);
    } catch (RuntimeException notSize) {
      return false;
    }
  }

  @Test
  void everyMetricTheDocsQuoteIsDefined() throws IOException {
    List<String> unknown = new ArrayList<>();
    int seen = 0;
    for (Path f : List.of(ROOT.resolve("README.md"), ROOT.resolve("docs/metrics.md"))) {
      String text = read(f);
      Matcher m = METRIC.matcher(text);
      while (m.find()) {
        seen++;
        if (RdmaMetrics.byName(m.group(1)) == null) {
          unknown.add(where(f, text, m.start()) + " " + m.group(1));
        }
      }
      Matcher p = PROMETHEUS.matcher(text);
      while (p.find()) {
        seen++;
        boolean cluster = p.group(1).equals("rdmaShuffleCluster");
        boolean found = false;
        for (RdmaMetrics.Metric def : RdmaMetrics.ALL) {
          if (def.name.replaceAll("[^a-zA-Z0-9]", "_").equals(p.group(2))
              && def.kind.valueName.equals(p.group(3))
              && (cluster ? def.onCluster() : !def.clusterOnly)) {
            found = true;
          }
        }
        if (!found) {
          unknown.add(where(f, text, p.start()) + " " + p.group().substring(1)
              + " (no metric of that name and kind in the " + p.group(1) + " source)");
        }
      }
    }
    assertTrue(seen > 50, "found only " + seen + " metric names: is the pattern broken?");
    assertTrue(unknown.isEmpty(), "metric names the docs quote that RdmaMetrics does not "
        + "define:\n  " + String.join("\n  ", unknown));
  }

  /** The checks themselves: a wrong key, default or metric is caught. */
  @Test
  void thePatternsCatchWhatTheyShould() {
    assertTrue(sameValue("5 s", "5s"));
    assertTrue(sameValue("2 minutes", "2min"));
    assertTrue(sameValue("16,384", "16384"));
    assertTrue(sameValue("1 GiB", "1g"));
    assertFalse(sameValue("15 s", "5s"));
    assertFalse(sameValue("0", "5s"));
    Matcher k = KEY.matcher("org.apache.spark.shuffle.rdma.RdmaShuffleManager and "
        + "spark.shuffle.rdma.transport.");
    assertTrue(k.find());
    assertTrue(k.group(1).equals("transport"), k.group(1));
    assertFalse(k.find());
    Matcher d = PAREN_DEFAULT.matcher("`spark.shuffle.rdma.service.driverTimeout` (2 minutes)");
    assertTrue(d.find());
    assertTrue(d.group(2).equals("2 minutes"), d.group(2));
    assertTrue(docsMetricNames("`transport.verbs`, metrics_a_driver_rdmaShuffleCluster_"
        + "transport_verbs_Value").equals(List.of("transport.verbs")));
  }

  private static List<String> docsMetricNames(String text) {
    Matcher m = METRIC.matcher(text);
    List<String> out = new ArrayList<>();
    while (m.find()) {
      out.add(m.group(1));
    }
    return out.stream().distinct().collect(Collectors.toList());
  }
}
