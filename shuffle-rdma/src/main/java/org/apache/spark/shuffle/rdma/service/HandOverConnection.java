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
 * (APP_DRIVER, the lease) and the applications it proved with their secret (APP_AUTH). Only
 * the connection's own thread touches it.
 */
final class HandOverConnection {
  /** An executor serves one application; a few more leave room for tools and tests. */
  static final int MAX_AUTHENTICATED = 8;

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
