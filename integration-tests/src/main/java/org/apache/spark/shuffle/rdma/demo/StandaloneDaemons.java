/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import org.apache.spark.SparkConf;
import org.apache.spark.deploy.master.Master$;
import org.apache.spark.deploy.worker.Worker$;
import org.apache.spark.rpc.RpcEnv;
import scala.Option;

/**
 * A Spark standalone master and one worker inside this JVM, the way {@code local-cluster}
 * starts them, but on a fixed port so that a worker on another host can join: under CPU
 * emulation every JVM costs minutes to start, so the driver host runs its master, its worker
 * and the driver in one. The worker still forks its executor as a JVM of its own.
 */
final class StandaloneDaemons implements AutoCloseable {
  private final RpcEnv master;
  private final RpcEnv worker;
  private final String masterUrl;

  StandaloneDaemons(String host, int masterPort, int workerCores, int workerMemoryMb) {
    SparkConf conf = new SparkConf();
    // Master$ and Worker$ are Scala objects; their start methods are what their main()s call.
    this.master = Master$.MODULE$.startRpcEnvAndEndpoint(host, masterPort, 0, conf)._1();
    this.masterUrl = "spark://" + host + ":" + master.address().port();
    this.worker = Worker$.MODULE$.startRpcEnvAndEndpoint(host, 0, 0, workerCores,
        workerMemoryMb, new String[] {masterUrl}, null, Option.apply(1), conf, Option.empty());
  }

  String masterUrl() {
    return masterUrl;
  }

  @Override
  public void close() {
    worker.shutdown();
    master.shutdown();
  }
}
