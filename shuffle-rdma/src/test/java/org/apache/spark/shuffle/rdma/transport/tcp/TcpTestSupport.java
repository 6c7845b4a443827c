/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import scala.Option;

/** Real transports on loopback, real files, real sockets: what the tcp tests share. */
public final class TcpTestSupport {
  private TcpTestSupport() {}

  static TcpTransport transport(SparkConf extra, String secret) throws IOException {
    return transport(extra, secret, "app-test");
  }

  /** A transport of application {@code appId} (the id its auth handshake presents). */
  public static TcpTransport transport(SparkConf extra, String secret, String appId)
      throws IOException {
    SparkConf conf = new SparkConf(false).set("spark.app.id", appId);
    for (scala.Tuple2<String, String> kv : extra.getAll()) {
      conf.set(kv._1(), kv._2());
    }
    SecurityManager sm = null;
    if (secret != null) {
      conf.set("spark.authenticate", "true").set("spark.authenticate.secret", secret);
      sm = new SecurityManager(conf, Option.empty(),
          org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE());
    }
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", sm,
        appId, 1));
  }

  static TcpTransport transport() throws IOException {
    return transport(new SparkConf(false), null);
  }

  static List<ReadResult> results(int n) {
    List<ReadResult> r = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      r.add(new ReadResult());
    }
    return r;
  }

  /** True if the server closed the connection within the wait. */
  static boolean closedByServer(java.net.Socket s, int waitMs) throws IOException {
    s.setSoTimeout(waitMs);
    try {
      java.io.InputStream in = s.getInputStream();
      while (true) {
        if (in.read() < 0) {
          return true;
        }
      }
    } catch (java.net.SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }

  /**
   * Waits up to 30 s for {@code counter} to reach {@code expected} and returns its value.
   * Counters the server bumps when a connection has closed (a failed handshake) can trail
   * the peer seeing the close: the fd closes before the close listeners run.
   */
  static long await(java.util.function.LongSupplier counter, long expected)
      throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (counter.getAsLong() < expected && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    return counter.getAsLong();
  }
}
