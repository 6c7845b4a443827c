/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service.yarn;

/**
 * The NodeManager-side settings of {@link YarnNodeService}, read from the YARN configuration
 * (yarn-site.xml), not from any application's SparkConf; documented in docs/node-service.md
 * ("YARN"). Every key is defined here once. The service's own options (--transport, --host,
 * --max-registered-bytes, --conf spark.shuffle.rdma.service.driverTimeout=..., ...) go through
 * {@link #ARGS} unchanged, so the service checks them exactly as on its command line.
 */
public final class YarnServiceKeys {
  private YarnServiceKeys() {}

  public static final String PREFIX = "spark.shuffle.rdma.service.yarn.";

  /**
   * Required: the service's Unix socket (--socket); every application on this cluster sets
   * spark.shuffle.rdma.service.socket to the same path.
   */
  public static final String SOCKET = PREFIX + "socket";

  /**
   * The Spark installation whose jars/ the service runs with (the Spark line of the
   * executors); default: the NodeManager's SPARK_HOME environment variable.
   */
  public static final String SPARK_HOME = PREFIX + "sparkHome";

  /** The plugin jar (or classes directory); default: the one this class was loaded from. */
  public static final String JAR = PREFIX + "jar";

  /** The Java installation to run the service with; default: the NodeManager's own. */
  public static final String JAVA_HOME = PREFIX + "javaHome";

  /** JVM options of the service, split on white space (e.g. "-Xmx1g"); default none. */
  public static final String JAVA_OPTS = PREFIX + "javaOpts";

  /**
   * More arguments of the service, split on white space, e.g. "--transport tcp
   * --max-registered-bytes 64g --conf spark.shuffle.rdma.service.driverTimeout=5min";
   * default none. --socket is {@link #SOCKET}'s.
   */
  public static final String ARGS = PREFIX + "args";

  /** How long serviceStart waits for the service's ready line; default 120 s. */
  public static final String START_TIMEOUT = PREFIX + "startTimeout";
  public static final long START_TIMEOUT_DEFAULT_MS = 120_000;

  /** How long serviceStop waits after SIGTERM before SIGKILL; default 60 s. */
  public static final String STOP_TIMEOUT = PREFIX + "stopTimeout";
  public static final long STOP_TIMEOUT_DEFAULT_MS = 60_000;
}
