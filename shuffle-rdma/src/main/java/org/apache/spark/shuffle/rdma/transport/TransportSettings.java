/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

import org.apache.spark.SecurityManager;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;

/**
 * What a transport needs to start: validated configuration, the host the executor advertises,
 * and Spark's security manager (for spark.authenticate; null only in unit tests without auth).
 */
public final class TransportSettings {
  private final RdmaShuffleConf conf;
  private final String advertisedHost;
  private final SecurityManager securityManager;
  private final String appId;
  private final int numUsableCores;

  public TransportSettings(RdmaShuffleConf conf, String advertisedHost,
      SecurityManager securityManager, String appId, int numUsableCores) {
    this.conf = conf;
    this.advertisedHost = advertisedHost;
    this.securityManager = securityManager;
    this.appId = appId;
    this.numUsableCores = numUsableCores;
  }

  public RdmaShuffleConf conf() {
    return conf;
  }

  /** Host Spark's block manager advertises for this executor; the tcp default bind host. */
  public String advertisedHost() {
    return advertisedHost;
  }

  public SecurityManager securityManager() {
    return securityManager;
  }

  public boolean authenticate() {
    return securityManager != null && securityManager.isAuthenticationEnabled();
  }

  public String appId() {
    return appId;
  }

  public int numUsableCores() {
    return numUsableCores;
  }
}
