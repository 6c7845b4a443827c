/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader.isolated;

/**
 * Asks the loaded libdisni which native layer it is (identity.c). Defined by the isolated
 * loader, like DiSNI, so its native method binds to the library that loader loads; loading
 * the library here, before DiSNI's own initialization runs, lets VerbsRuntime refuse a
 * foreign libdisni before any of its code is used.
 */
public final class NativeIdentity {
  static {
    System.loadLibrary("disni");
  }

  private NativeIdentity() {}

  /** "shuffle-rdma-native N"; UnsatisfiedLinkError from any other libdisni. */
  public static native String version();
}
