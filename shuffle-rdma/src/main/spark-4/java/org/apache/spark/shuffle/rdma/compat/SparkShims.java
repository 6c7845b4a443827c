/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.compat;

import org.apache.spark.SparkConf;
import org.apache.spark.network.netty.SparkTransportConf;
import org.apache.spark.network.util.TransportConf;
import scala.Option;

/**
 * The calls whose Spark API differs between lines, Spark 4.x version (4.0, 4.1, 4.2).
 * Its twin for Spark 3.5 is in src/main/spark-3.5; both have the same methods.
 */
public final class SparkShims {
  private SparkShims() {}

  /** The Spark line this jar is for: Spark 4.x (RdmaShuffleManager refuses another). */
  public static final String LINE = "4";

  /**
   * Netty transport settings of {@code module} from the Spark configuration. Spark 4 added a
   * fifth parameter, the SSL options of Spark's RPC (not used: the plugin's tcp transport
   * authenticates and encrypts with Spark's AES-GCM auth protocol instead).
   */
  public static TransportConf transportConf(SparkConf conf, String module, int cores) {
    return SparkTransportConf.fromSparkConf(conf, module, cores, Option.empty(), Option.empty());
  }
}
