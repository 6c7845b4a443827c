/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service.yarn;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The Java the node service needs against the Java that would run it: the plugin jar's class
 * files say the first (class file version 61: Java 17, the Spark 4 lines; 55: Java 11, the
 * Spark 3.5 lines), the {@code release} file of the Java installation (or this JVM's own
 * version, when it is the NodeManager's) the second. Checked at serviceInit, so a too old
 * Java fails the NodeManager's start naming both and the fix, not the service's start with a
 * class loading error. JDK only: runs inside the NodeManager.
 */
final class JavaLevel {
  /** A class of the node service, whose class file version the whole jar shares. */
  static final String PROBE = "org/apache/spark/shuffle/rdma/service/NodeService.class";
  private static final Pattern RELEASE = Pattern.compile(
      "(?m)^JAVA_VERSION=\"?(1\\.)?(\\d+)");

  private JavaLevel() {
  }

  /** The Java feature version the plugin jar (or classes directory) needs; -1 unknown. */
  static int needed(Path plugin) throws IOException {
    byte[] head = new byte[8];
    int n;
    if (Files.isDirectory(plugin)) {
      Path f = plugin.resolve(PROBE);
      if (!Files.isRegularFile(f)) {
        return -1;
      }
      try (InputStream in = Files.newInputStream(f)) {
        n = in.readNBytes(head, 0, 8);
      }
    } else {
      try (ZipFile z = new ZipFile(plugin.toFile())) {
        ZipEntry e = z.getEntry(PROBE);
        if (e == null) {
          return -1;
        }
        try (InputStream in = z.getInputStream(e)) {
          n = in.readNBytes(head, 0, 8);
        }
      }
    }
    if (n < 8 || (head[0] & 0xff) != 0xca || (head[1] & 0xff) != 0xfe) {
      return -1;
    }
    int major = ((head[6] & 0xff) << 8) | (head[7] & 0xff);
    return major - 44;
  }

  /**
   * The feature version of the Java installation at {@code javaHome} (this JVM's when it is
   * this JVM's home), from its release file ({@code JAVA_VERSION="17.0.2"}, or "1.8.0_392"
   * for Java 8); -1 when it has none.
   */
  static int of(Path javaHome) throws IOException {
    Path own = Paths.get(System.getProperty("java.home"));
    if (javaHome.toAbsolutePath().normalize().equals(own.toAbsolutePath().normalize())) {
      return Runtime.version().feature();
    }
    Path release = javaHome.resolve("release");
    if (!Files.isRegularFile(release)) {
      return -1;
    }
    return ofRelease(Files.readString(release, StandardCharsets.UTF_8));
  }

  static int ofRelease(String release) {
    Matcher m = RELEASE.matcher(release);
    return m.find() ? Integer.parseInt(m.group(2)) : -1;
  }

  /**
   * Null when {@code found} runs class files of {@code needed} (or either is unknown), else
   * the message: the Java found and needed, and the fix.
   *
   * @param javaHome the Java that would run the service
   * @param configured whether javaHome comes from {@link YarnServiceKeys#JAVA_HOME}
   */
  static String check(int found, int needed, Path javaHome, boolean configured, Path plugin) {
    if (found < 0 || needed < 0 || found >= needed) {
      return null;
    }
    String which = configured ? YarnServiceKeys.JAVA_HOME : "the NodeManager's own Java; "
        + YarnServiceKeys.JAVA_HOME + " is not set";
    String other = found >= 11 && needed > 11
        ? ", or use the plugin jar of a Spark 3.5 line (Java 11) if this node's Spark is 3.5"
        : "";
    return "the node service needs Java " + needed + " or newer: the plugin jar " + plugin
        + " holds class files of Java " + needed + " (class file version " + (needed + 44)
        + "; the Spark 4 lines' jars need Java 17, the Spark 3.5 lines' Java 11), but the Java "
        + "that would run it, " + javaHome + " (" + which + "), is Java " + found
        + ". Fix: set " + YarnServiceKeys.JAVA_HOME + " in yarn-site.xml to a Java " + needed
        + " or newer installation (the service runs as a child process with it; the "
        + "NodeManager keeps its own Java)" + other;
  }
}
