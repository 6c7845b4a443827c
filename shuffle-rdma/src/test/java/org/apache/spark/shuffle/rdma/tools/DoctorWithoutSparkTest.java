/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.ibm.disni.RdmaEndpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operators run the doctor as {@code java -jar shuffle-rdma.jar doctor}: the jar holds this
 * project's classes and DiSNI, no Spark. Runs it in a JVM with exactly that class path, so a
 * Spark class reached on any of its paths fails here rather than on a cluster (as the
 * ConfigEntry read for spark.executor.memory once did, in the Soft-RoCE guests).
 */
class DoctorWithoutSparkTest {
  @TempDir
  Path tmp;

  @Test
  void runsWithTheJarsClassPathOnly() throws Exception {
    Path conf = tmp.resolve("spark-defaults.conf");
    Files.writeString(conf, SparkDefaults.EXECUTOR_MEMORY + " 4g\n"
        + SparkDefaults.fullKey("maxRegisteredBytes") + " 1g\n");
    Path out = tmp.resolve("out.txt");
    String cp = ownClasses() + File.pathSeparator + jarOf(RdmaEndpoint.class);
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-cp", cp, Main.class.getName(), "doctor",
        conf.toString()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "doctor did not finish in 120 s");
    String text = Files.readString(out, StandardCharsets.UTF_8);
    // 0 where verbs can run, 1 where they cannot (this build host has no RDMA); never a crash.
    assertTrue(p.exitValue() == 0 || p.exitValue() == 1, "exit " + p.exitValue() + "\n" + text);
    assertFalse(text.contains("Exception") || text.contains("Error:"), text);
    assertTrue(text.contains("container memory limit"), "the memory budget was not judged\n"
        + text);
    assertTrue(text.contains("memlock"), text);
  }

  @Test
  void theSpelledKeyIsSparks() {
    assertEquals(org.apache.spark.internal.config.package$.MODULE$.EXECUTOR_MEMORY().key(),
        SparkDefaults.EXECUTOR_MEMORY);
  }

  /** target/classes (or the jar) holding this project's production classes, and only them. */
  private static String ownClasses() throws Exception {
    Path p = jarOf(Doctor.class);
    List<String> spark = List.of("org/apache/spark/SparkConf.class",
        "org/apache/spark/internal/config/package.class");
    if (Files.isDirectory(p)) {
      for (String c : spark) {
        assertFalse(Files.exists(p.resolve(c)), p + " holds " + c);
      }
    }
    return p.toString();
  }

  private static Path jarOf(Class<?> c) throws Exception {
    return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}
