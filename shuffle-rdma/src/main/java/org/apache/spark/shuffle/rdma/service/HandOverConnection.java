/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.shuffle.rdma.handover.HandOverRequest;

/**
 * What one executor's connection to the service has declared: its application's driver
 * (APP_DRIVER, the lease) and the applications it proved with their secret (APP_AUTH), and
 * whether the kernel says it comes from the process that started the service. Only the
 * connection's own thread touches it.
 */
final class HandOverConnection {
  /** An executor serves one application; a few more leave room for tools and tests. */
  static final int MAX_AUTHENTICATED = 8;

  /**
   * The peer is this service's parent process (SO_PEERCRED's pid): on YARN the NodeManager,
   * which started it. It may release any application, authenticated or not, without its
   * secret: releasing is less than what a parent can always do (stop the service, which then
   * serves nothing), and the NodeManager ends applications without holding their
   * secrets. It may not hand over or release parts under an application's name.
   */
  final boolean fromParent;

  HandOverConnection() {
    this(false);
  }

  HandOverConnection(boolean fromParent) {
    this.fromParent = fromParent;
  }

  HandOverRequest driver;
  private final Map<String, HandOverRequest> authenticated = new HashMap<>();

  /** The APP_AUTH this connection presented for {@code appId}, or null. */
  HandOverRequest auth(String appId) {
    return authenticated.get(appId);
  }

  /** Records a proof the service took; false when this connection holds too many. */
  boolean authenticated(HandOverRequest auth) {
    if (!authenticated.containsKey(auth.appId()) && authenticated.size() >= MAX_AUTHENTICATED) {
      return false;
    }
    authenticated.put(auth.appId(), auth);
    return true;
  }
}
