/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.spark.shuffle.rdma.transport.verbs.VerbsSelfTest;

/**
 * {@code java -jar shuffle-rdma.jar selftest server|client|intruder ...}: the operator's check of
 * an RDMA fabric between two hosts ({@link VerbsSelfTest}: real READs through the verbs
 * transport, byte-checked). The self-test needs Spark's classes, which the shaded jar leaves to
 * the cluster: when they are not on the classpath already, they come from
 * {@code $SPARK_HOME/jars}, in a class loader holding this jar and those jars.
 */
final class SelfTestCommand {
  private static final String SPARK_CLASS = "org.apache.spark.SparkConf";

  private SelfTestCommand() {}

  /** Runs the self-test (it exits the JVM itself); returns only when it cannot start. */
  static int run(String[] args, String sparkHome, PrintStream err) throws Exception {
    ClassLoader own = SelfTestCommand.class.getClassLoader();
    if (loadable(SPARK_CLASS, own)) {
      invokeMain(own, args);
      return 0;
    }
    List<URL> jars = sparkJars(sparkHome);
    if (jars.isEmpty()) {
      err.println("selftest needs Spark's jars: set SPARK_HOME to a Spark installation "
          + "(its jars/ directory is used)" + (sparkHome == null ? "" : "; " + sparkHome
          + "/jars has no jar"));
      return 2;
    }
    jars.add(0, SelfTestCommand.class.getProtectionDomain().getCodeSource().getLocation());
    // Parent: the platform loader, so this jar's classes are defined here, next to Spark's.
    URLClassLoader loader = new URLClassLoader(jars.toArray(new URL[0]),
        ClassLoader.getPlatformClassLoader());
    Thread.currentThread().setContextClassLoader(loader);
    invokeMain(loader, args);
    return 0;
  }

  /** The jars of {@code sparkHome}/jars, sorted; empty when there are none. */
  static List<URL> sparkJars(String sparkHome) throws IOException {
    List<URL> out = new ArrayList<>();
    if (sparkHome == null || sparkHome.isEmpty()) {
      return out;
    }
    Path dir = Paths.get(sparkHome, "jars");
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s.filter(f -> f.toString().endsWith(".jar")).sorted()::iterator) {
        out.add(p.toUri().toURL());
      }
    }
    return out;
  }

  static boolean loadable(String name, ClassLoader loader) {
    try {
      Class.forName(name, false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static void invokeMain(ClassLoader loader, String[] args) throws Exception {
    Method main = Class.forName(VerbsSelfTest.class.getName(), true, loader)
        .getMethod("main", String[].class);
    try {
      main.invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Error) {
        throw (Error) cause; // a failed check: AssertionError, exit status 1
      }
      throw cause instanceof Exception ? (Exception) cause : e;
    }
  }
}
