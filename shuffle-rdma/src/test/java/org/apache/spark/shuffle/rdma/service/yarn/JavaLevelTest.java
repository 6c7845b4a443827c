/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The auxiliary service's Java check: the Java the plugin jar's class files need (61: 17, the
 * Spark 4 lines; 55: 11, the 3.5 lines) against the Java that would run the service (its
 * release file, or this JVM), and serviceInit failing with both named and the fix.
 */
class JavaLevelTest {
  @TempDir
  Path tmp;

  /** A jar whose node service class has class file version {@code major}. */
  private Path jar(String name, int major) throws Exception {
    Path jar = tmp.resolve(name);
    try (OutputStream f = Files.newOutputStream(jar); ZipOutputStream z = new ZipOutputStream(f)) {
      z.putNextEntry(new ZipEntry(JavaLevel.PROBE));
      z.write(new byte[] {(byte) 0xca, (byte) 0xfe, (byte) 0xba, (byte) 0xbe, 0, 0, 0,
          (byte) major, 0, 0});
      z.closeEntry();
    }
    return jar;
  }

  private Path javaHome(String version) throws Exception {
    Path home = Files.createDirectories(tmp.resolve("jdk-" + version));
    Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"Eclipse Adoptium\"\n"
        + "JAVA_VERSION=\"" + version + "\"\nJAVA_RUNTIME_VERSION=\"x\"\n");
    return home;
  }

  @Test
  void theJarsClassFilesSayTheJavaTheyNeed() throws Exception {
    assertEquals(17, JavaLevel.needed(jar("spark4.jar", 61)));
    assertEquals(11, JavaLevel.needed(jar("spark35.jar", 55)));
    Path classes = Paths.get(JavaLevel.class.getProtectionDomain().getCodeSource()
        .getLocation().toURI());
    assertTrue(JavaLevel.needed(classes) >= 11, classes.toString());
    Path empty = tmp.resolve("empty.jar");
    try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(empty))) {
      z.putNextEntry(new ZipEntry("x"));
    }
    assertEquals(-1, JavaLevel.needed(empty));
  }

  @Test
  void theReleaseFileSaysTheJavaFound() throws Exception {
    assertEquals(8, JavaLevel.of(javaHome("1.8.0_392")));
    assertEquals(11, JavaLevel.of(javaHome("11.0.22")));
    assertEquals(21, JavaLevel.of(javaHome("21")));
    assertEquals(-1, JavaLevel.of(tmp));
    assertEquals(Runtime.version().feature(),
        JavaLevel.of(Paths.get(System.getProperty("java.home"))));
  }

  @Test
  void aJavaTooOldIsRefusedNamingBothAndTheFix() {
    Path home = Paths.get("/usr/lib/jvm/java-11");
    Path jar = Paths.get("/opt/shuffle-rdma/shuffle-rdma-spark4.2_2.13-0.1.0.jar");
    String m = JavaLevel.check(11, 17, home, false, jar);
    assertTrue(m != null && m.contains("needs Java 17") && m.contains("is Java 11")
        && m.contains(home.toString()) && m.contains(jar.toString())
        && m.contains("the NodeManager's own Java") && m.contains("set "
        + YarnServiceKeys.JAVA_HOME) && m.contains("Spark 3.5 line"), m);
    assertTrue(JavaLevel.check(8, 11, home, true, jar).contains("(" + YarnServiceKeys.JAVA_HOME
        + ")"));
    assertNull(JavaLevel.check(17, 17, home, true, jar));
    assertNull(JavaLevel.check(21, 11, home, true, jar));
    assertNull(JavaLevel.check(-1, 17, home, true, jar));
  }

  @Test
  void serviceInitFailsWithTheMessage() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set(YarnServiceKeys.SOCKET, tmp.resolve("s.sock").toString());
    conf.set(YarnServiceKeys.JAVA_HOME, javaHome("11.0.22").toString());
    conf.set(YarnServiceKeys.JAR, jar("spark4.jar", 61).toString());
    Exception e = assertThrows(Exception.class, () -> new YarnNodeService().init(conf));
    String m = String.valueOf(e.getMessage());
    assertTrue(m.contains("needs Java 17") && m.contains("is Java 11"), e.toString());
  }
}
