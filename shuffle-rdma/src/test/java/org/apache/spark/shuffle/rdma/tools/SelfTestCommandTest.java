/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.apache.spark.shuffle.rdma.transport.verbs.VerbsSelfTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SelfTestCommandTest {
  @TempDir
  Path tmp;

  @Test
  void sparkJarsComeFromSparkHomeJars() throws Exception {
    assertTrue(SelfTestCommand.sparkJars(null).isEmpty());
    assertTrue(SelfTestCommand.sparkJars(tmp.toString()).isEmpty());
    Files.createDirectories(tmp.resolve("jars"));
    Files.writeString(tmp.resolve("jars/b.jar"), "");
    Files.writeString(tmp.resolve("jars/a.jar"), "");
    Files.writeString(tmp.resolve("jars/README"), "");
    List<URL> jars = SelfTestCommand.sparkJars(tmp.toString());
    assertEquals(2, jars.size(), jars.toString());
    assertTrue(jars.get(0).getPath().endsWith("/jars/a.jar"), jars.toString());
  }

  @Test
  void theSelfTestIsTheCommandsTarget() {
    // The class the command starts by name (in a fresh loader) is in the production tree.
    ClassLoader here = getClass().getClassLoader();
    assertTrue(SelfTestCommand.loadable(VerbsSelfTest.class.getName(), here));
    assertTrue(SelfTestCommand.loadable("org.apache.spark.SparkConf", here));
    assertFalse(SelfTestCommand.loadable("org.apache.spark.NoSuchClass", here));
  }
}
