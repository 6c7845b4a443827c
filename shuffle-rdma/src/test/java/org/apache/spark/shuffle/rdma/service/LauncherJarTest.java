/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/shuffle-rdma-service and bin/shuffle-rdma-doctor take the plugin jar of the Spark line
 * SPARK_HOME holds (its jars/spark-core_SCALA-VERSION.jar), whatever other lines' jars dist/
 * has, and stop naming the jar they expected when that line's is missing. Run on a copy of the
 * scripts beside a fake dist/, a fake SPARK_HOME and a java that prints its arguments.
 */
class LauncherJarTest {
  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."))
      .toAbsolutePath().normalize();

  @TempDir
  Path tmp;
  private Path tree;
  private Path javaHome;

  @BeforeEach
  void layout() throws Exception {
    tree = tmp.resolve("tree");
    Files.createDirectories(tree.resolve("bin"));
    Files.createDirectories(tree.resolve("dist"));
    for (String s : new String[] {"shuffle-rdma-service", "shuffle-rdma-doctor"}) {
      Files.copy(ROOT.resolve("bin").resolve(s), tree.resolve("bin").resolve(s),
          StandardCopyOption.COPY_ATTRIBUTES);
    }
    for (String line : new String[] {"3.5_2.12", "3.5_2.13", "4.1_2.13", "4.2_2.13"}) {
      String jar = "shuffle-rdma-spark" + line + "-0.1.0.jar";
      Files.writeString(tree.resolve("dist").resolve(jar), "");
      Files.writeString(tree.resolve("dist").resolve(jar + ".sha256"), "");
    }
    javaHome = tmp.resolve("jdk");
    Path java = Files.createDirectories(javaHome.resolve("bin")).resolve("java");
    Files.writeString(java, "#!/bin/sh\necho \"java $*\"\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private Path spark(String coreJar) throws Exception {
    Path home = tmp.resolve("spark-" + coreJar);
    Files.createDirectories(home.resolve("jars"));
    Files.writeString(home.resolve("jars").resolve(coreJar), "");
    Files.writeString(home.resolve("jars").resolve("spark-network-common_2.13-4.1.0.jar"), "");
    return home;
  }

  /** Exit status, then stdout and stderr. */
  private String[] run(String script, Path sparkHome, String pluginJar) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(tree.resolve("bin").resolve(script).toString(),
        "--socket", "/tmp/never-used.sock")
        .redirectOutput(tmp.resolve("out").toFile()).redirectError(tmp.resolve("err").toFile());
    if (script.endsWith("doctor")) {
      pb.command().subList(1, 3).clear();
    }
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("PATH", "/usr/bin:/bin");
    env.put("JAVA_HOME", javaHome.toString());
    if (sparkHome != null) {
      env.put("SPARK_HOME", sparkHome.toString());
    }
    if (pluginJar != null) {
      env.put("SHUFFLE_RDMA_JAR", pluginJar);
    }
    Process p = pb.start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return new String[] {String.valueOf(p.exitValue()),
        Files.readString(tmp.resolve("out"), StandardCharsets.UTF_8),
        Files.readString(tmp.resolve("err"), StandardCharsets.UTF_8)};
  }

  private String dist(String line) {
    return tree.resolve("dist/shuffle-rdma-spark" + line + "-0.1.0.jar").toString();
  }

  @Test
  void theServiceTakesTheJarOfSparkHomesLine() throws Exception {
    String[] r = run("shuffle-rdma-service", spark("spark-core_2.13-4.1.0.jar"), null);
    assertEquals("0", r[0], r[2]);
    assertTrue(r[1].contains("-cp " + dist("4.1_2.13") + ":"), r[1]);
    r = run("shuffle-rdma-service", spark("spark-core_2.12-3.5.6.jar"), null);
    assertTrue(r[1].contains("-cp " + dist("3.5_2.12") + ":"), r[1]);
    r = run("shuffle-rdma-service", spark("spark-core_2.13-3.5.6.jar"), null);
    assertTrue(r[1].contains("-cp " + dist("3.5_2.13") + ":"), r[1]);
  }

  @Test
  void withoutThatLinesJarTheServiceStopsNamingIt() throws Exception {
    String[] r = run("shuffle-rdma-service", spark("spark-core_2.13-4.0.1.jar"), null);
    assertEquals("2", r[0], r[1]);
    assertTrue(r[2].contains("shuffle-rdma-spark4.0_2.13-<version>.jar")
        && r[2].contains("spark-core_2.13-4.0.1.jar") && r[2].contains("build-all-lines 4.0"),
        r[2]);
    assertEquals("", r[1]);
  }

  @Test
  void shuffleRdmaJarWinsAndAJarWithoutALineNextToTheScriptIsTaken() throws Exception {
    Path sparkHome = spark("spark-core_2.13-4.1.0.jar");
    Path mine = Files.writeString(tmp.resolve("mine.jar"), "");
    String[] r = run("shuffle-rdma-service", sparkHome, mine.toString());
    assertTrue(r[1].contains("-cp " + mine + ":"), r[1] + r[2]);
    // The container image's layout: /opt/shuffle-rdma/shuffle-rdma.jar beside bin/.
    Files.writeString(tree.resolve("shuffle-rdma.jar"), "");
    r = run("shuffle-rdma-service", sparkHome, null);
    assertTrue(r[1].contains("-cp " + tree.resolve("shuffle-rdma.jar") + ":"), r[1]);
  }

  @Test
  void theDoctorTakesTheJarOfSparkHomesLineElseTheNewestLine() throws Exception {
    String[] r = run("shuffle-rdma-doctor", spark("spark-core_2.12-3.5.6.jar"), null);
    assertTrue(r[1].contains("-jar " + dist("3.5_2.12") + " doctor"), r[1] + r[2]);
    r = run("shuffle-rdma-doctor", spark("spark-core_2.13-4.0.1.jar"), null);
    assertEquals("2", r[0], r[1]);
    assertTrue(r[2].contains("shuffle-rdma-spark4.0_2.13-<version>.jar"), r[2]);
    r = run("shuffle-rdma-doctor", null, null);
    assertTrue(r[1].contains("-jar " + dist("4.2_2.13") + " doctor"), r[1] + r[2]);
  }
}
