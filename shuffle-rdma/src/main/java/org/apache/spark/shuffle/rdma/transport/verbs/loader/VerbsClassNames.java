/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

/**
 * The classes of the verbs transport that must be named by string: they are defined by
 * {@link IsolatedVerbsClassLoader} (with DiSNI and libdisni), and a class literal in plugin
 * code would load them in the plugin's own loader instead. Every such name lives here, and
 * VerbsClassNamesTest checks that each one resolves, so a rename fails the build, not a job.
 */
public final class VerbsClassNames {
  /** The transport itself (constructed by VerbsTransportProvider). */
  public static final String TRANSPORT =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.VerbsTransport";
  /** Device and native-layer probe (VerbsRuntime's load check, the doctor's ODP line). */
  public static final String NATIVE_PROBE =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.NativeProbe";
  /** Proves the loaded libdisni is ours (LibraryIdentity). */
  public static final String NATIVE_IDENTITY =
      "org.apache.spark.shuffle.rdma.transport.verbs.loader.isolated.NativeIdentity";
  /** The plugin's own RDMA-CM calls (connection authentication); NativeLayerTest binds them. */
  public static final String CM_NATIVE =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.CmNative";
  /** The plugin's own wait for a CQ event that names the CQ; NativeLayerTest binds it. */
  public static final String CQ_EVENTS =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.CqEvents";
  /**
   * The two classes that log each connection's READ depths at debug: the reader's side
   * (offered, granted) and the server's (requested, granted). The self-test turns them on.
   */
  public static final String OUTBOUND_CONNECTION =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.OutboundConnection";
  public static final String ACCEPTOR =
      "org.apache.spark.shuffle.rdma.transport.verbs.impl.VerbsAcceptor";
  /** DiSNI's JNI front; its code source is where the isolated loader finds DiSNI. */
  public static final String DISNI_DISPATCHER = "com.ibm.disni.verbs.impl.NativeDispatcher";

  /** Every name above, for the test that they resolve. */
  static final String[] ALL = {TRANSPORT, NATIVE_PROBE, NATIVE_IDENTITY, CM_NATIVE, CQ_EVENTS,
      OUTBOUND_CONNECTION, ACCEPTOR, DISNI_DISPATCHER};

  private VerbsClassNames() {}

  /** "a.b.C" as the class file's resource name, "a/b/C.class". */
  static String resource(String className) {
    return className.replace('.', '/') + ".class";
  }
}
