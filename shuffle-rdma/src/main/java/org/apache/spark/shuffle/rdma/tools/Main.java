/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.util.Arrays;

/**
 * {@code java -jar shuffle-rdma.jar <command>}. Runs without Spark on the classpath (the
 * shaded jar leaves Spark out), so the doctor uses plain Java only; {@code selftest} brings
 * Spark's jars from {@code $SPARK_HOME/jars} ({@link SelfTestCommand}).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    // Standalone there is no slf4j provider; DiSNI's logging is not worth a warning here.
    if (System.getProperty("slf4j.internal.verbosity") == null) {
      System.setProperty("slf4j.internal.verbosity", "ERROR");
    }
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
      usage();
      return args.length == 0 ? 2 : 0;
    }
    switch (args[0]) {
      case "doctor":
        return Doctor.run(Arrays.copyOfRange(args, 1, args.length), System.out);
      case "selftest":
        return SelfTestCommand.run(Arrays.copyOfRange(args, 1, args.length),
            System.getenv("SPARK_HOME"), System.err);
      default:
        System.err.println("unknown command: " + args[0]);
        usage();
        return 2;
    }
  }

  private static void usage() {
    System.err.println("usage: java -jar shuffle-rdma.jar doctor [path/to/spark-defaults.conf]");
    System.err.println("       java -jar shuffle-rdma.jar selftest server <ip> <port> <dir> | "
        + "client <ip> <dir> | intruder <ip> <dir>");
    System.err.println("  doctor    checks RDMA devices, ports, addresses, MTU, memlock and the "
        + "native layer on this host; exits 0 when the verbs transport can run");
    System.err.println("  selftest  RDMA READs between two hosts through the verbs transport, "
        + "every byte checked (needs SPARK_HOME); see docs/rdma-setup.md");
  }
}
