/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.IOException;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.TransportFactory;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportProvider;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransport;

/**
 * Opens the node service's transports, of the kind {@code --transport} chose once at start.
 *
 * <p>tcp: applications without authentication share one transport; one that authenticates
 * gets its own, with Spark's auth engine and its secret. verbs: every application gets its
 * own {@code VerbsTransport}, which is its own protection domain, so a key of one
 * application is useless on another's queue pairs, and which authenticates RDMA-CM connects
 * with the application's secret when it has one (spark.authenticate), as an executor's does.
 */
final class ServiceTransports {
  /** Threads of a service transport: it serves and never reads, so few. */
  private static final int SERVICE_TRANSPORT_CORES = 2;
  /**
   * Receive pool of a service's verbs transport unless --conf sets one: the service never
   * reads, and the pool is pinned per application.
   */
  static final String SERVICE_RECEIVE_POOL = "1m";

  private final Map<String, String> conf;
  /** The address readers reach: --host, else this host's. */
  private final String host;
  /** --host as given (null: none), the verbs bind address unless --conf names one. */
  private final String givenHost;
  private final String kind;
  /** Whether every application gets a transport of its own: verbs, or a test's tcp. */
  private final boolean perApplication;

  private ServiceTransports(ServiceArgs args, String host, String kind) {
    this(args, host, kind, kind.equals("verbs"));
  }

  private ServiceTransports(ServiceArgs args, String host, String kind,
      boolean perApplication) {
    this.conf = args.conf;
    this.host = host;
    this.givenHost = args.host;
    this.kind = kind;
    this.perApplication = perApplication;
  }

  /**
   * Tests: tcp laid out as verbs is, a transport per application and none shared, so that
   * layout is tested where no RDMA device exists.
   */
  static ServiceTransports tcpPerApplication(ServiceArgs args, String host) {
    return new ServiceTransports(args, host, "tcp", true);
  }

  /**
   * The kind --transport names; auto is verbs when a verbs transport opens here, else tcp
   * (logged with the reason). verbs that cannot start is an IOException naming why.
   */
  static ServiceTransports choose(ServiceArgs args, String host, ServiceLog log)
      throws IOException {
    ServiceTransports verbs = new ServiceTransports(args, host, "verbs");
    if (args.transport.equals("tcp")) {
      return new ServiceTransports(args, host, "tcp");
    }
    String why;
    try {
      // One transport opened and closed: the device, its port, memlock and the native
      // library all work, before the service says it is ready.
      verbs.open(NodeService.SERVICE_APP_ID, null, 0).close();
      log.info("transport " + args.transport + ": verbs (a protection domain and an RDMA-CM "
          + "port per application)");
      return verbs;
    } catch (IOException | RuntimeException | LinkageError e) {
      why = e.getMessage();
    }
    if (args.transport.equals("verbs")) {
      throw new IOException("--transport verbs: RDMA verbs cannot start here: " + why
          + " Run 'java -jar shuffle-rdma.jar doctor' on this host, or use --transport tcp.");
    }
    log.info("transport auto: tcp, because verbs cannot start here: " + why);
    return new ServiceTransports(args, host, "tcp");
  }

  /** "tcp" or "verbs". */
  String kind() {
    return kind;
  }

  /** Whether every application gets a transport of its own (verbs: its own PD). */
  boolean perApplication() {
    return perApplication;
  }

  /** The transport applications without authentication share (tcp only). */
  ShuffleTransport openShared(int port) throws IOException {
    if (perApplication()) {
      throw new IllegalStateException("verbs has no shared transport");
    }
    SparkConf c = base();
    c.set(RdmaConf.PORT().key(), Integer.toString(port));
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(c), host, null,
        NodeService.SERVICE_APP_ID, Runtime.getRuntime().availableProcessors()));
  }

  /**
   * One application's own transport on any free port: with {@code secret} (not null) its
   * readers must prove it (Spark's auth engine on tcp, the RDMA-CM HMAC on verbs) and
   * {@code encryption} asks for Spark's wire encryption
   * ({@link HandOverRequest#NETWORK_CRYPTO}, {@link HandOverRequest#SASL_ENCRYPTION}).
   *
   * @throws RefusalException verbs for an application that asks for encryption, unless the
   *     service's own --conf allows unencrypted RDMA (RDMA READ moves bytes as they are)
   */
  ShuffleTransport open(String appId, String secret, int encryption) throws IOException {
    SparkConf c = base();
    org.apache.spark.internal.config.package$ spark =
        org.apache.spark.internal.config.package$.MODULE$;
    c.set(RdmaConf.PORT().key(), "0");
    c.set("spark.app.id", appId);
    org.apache.spark.SecurityManager security = null;
    if (secret != null) {
      c.set(spark.NETWORK_AUTH_ENABLED().key(), "true");
      c.set(spark.AUTH_SECRET().key(), secret);
      c.set(org.apache.spark.internal.config.Network$.MODULE$.NETWORK_CRYPTO_ENABLED().key(),
          Boolean.toString((encryption & HandOverRequest.NETWORK_CRYPTO) != 0));
      c.set(spark.SASL_ENCRYPTION_ENABLED().key(),
          Boolean.toString((encryption & HandOverRequest.SASL_ENCRYPTION) != 0));
      security = new org.apache.spark.SecurityManager(c, scala.Option.empty(),
          spark.AUTH_SECRET_FILE());
    }
    RdmaShuffleConf rdma = new RdmaShuffleConf(c);
    TransportSettings settings = new TransportSettings(rdma, host, security, appId,
        SERVICE_TRANSPORT_CORES);
    if (kind.equals("tcp")) {
      return new TcpTransport(settings);
    }
    String conflict = rdma.rdmaEncryptionConflict();
    if (conflict != null) {
      throw new RefusalException("this node service serves on verbs and " + conflict
          + " (for the service: --conf " + RdmaConf.ALLOW_UNENCRYPTED_RDMA().key() + "=true)");
    }
    TransportProvider p = TransportFactory.provider("verbs");
    if (p == null) {
      throw new IOException("the verbs transport is not part of this build");
    }
    return p.create(settings);
  }

  /** The service's --conf, with the service's defaults for what it leaves unset. */
  private SparkConf base() {
    SparkConf c = new SparkConf(false);
    for (Map.Entry<String, String> e : conf.entrySet()) {
      c.set(e.getKey(), e.getValue());
    }
    c.set(RdmaConf.TRANSPORT().key(), kind);
    c.setIfMissing(RdmaConf.VERBS_RECEIVE_POOL_SIZE().key(), SERVICE_RECEIVE_POOL);
    c.setIfMissing(RdmaConf.VERBS_COMPLETION_THREADS().key(), "1");
    // On verbs the transport serves on the RDMA netdev's address; --host picks it when the
    // node has several (as spark.shuffle.rdma.bindAddress does for an executor).
    if (kind.equals("verbs") && givenHost != null) {
      c.setIfMissing(RdmaConf.BIND_ADDRESS().key(), givenHost);
    }
    return c;
  }
}
