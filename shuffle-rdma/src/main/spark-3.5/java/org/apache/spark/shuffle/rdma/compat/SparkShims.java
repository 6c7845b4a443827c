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
 * The calls whose Spark API differs between lines, Spark 3.5 version. Its twin for Spark 4.x
 * is in src/main/spark-4; both have the same methods.
 */
public final class SparkShims {
  private SparkShims() {}

  /** The Spark line this jar is for: Spark 3.5.x (RdmaShuffleManager refuses another). */
  public static final String LINE = "3.5";

  /** Netty transport settings of {@code module} from the Spark configuration. */
  public static TransportConf transportConf(SparkConf conf, String module, int cores) {
    return SparkTransportConf.fromSparkConf(conf, module, cores, Option.empty());
  }
}
