/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
// Prints the JVM options Spark's own launcher adds (module openings), so scripts that start a
// driver with plain `java` use Spark's list instead of a copy of it.
public class SparkJvmOptions {
  public static void main(String[] args) {
    System.out.println(org.apache.spark.launcher.JavaModuleOptions.defaultModuleOptions());
  }
}
