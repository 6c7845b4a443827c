/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

/**
 * Prints the JVM options Spark's own launcher adds (module openings), for
 * bin/shuffle-rdma-service to start the service with Spark's list instead of a copy of it.
 */
public final class JvmOptions {
  private JvmOptions() {}

  public static void main(String[] args) {
    System.out.println(org.apache.spark.launcher.JavaModuleOptions.defaultModuleOptions());
  }
}
