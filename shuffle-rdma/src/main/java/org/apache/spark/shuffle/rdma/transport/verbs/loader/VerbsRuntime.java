/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;

/**
 * The one place per JVM where DiSNI and its native library are loaded. A JNI library can
 * belong to only one class loader per JVM, so the isolated loader is created once and shared
 * by the transport, the provider's checks and the doctor. The outcome, success or the
 * reason for failure, is remembered: a failed load is not retried.
 */
public final class VerbsRuntime {
  private static VerbsRuntime instance;

  private final ClassLoader loader;
  private final String description;
  private final String failure;

  private VerbsRuntime(ClassLoader loader, String description, String failure) {
    this.loader = loader;
    this.description = description;
    this.failure = failure;
  }

  /** Loads DiSNI and libdisni on first call; later calls return the same outcome. */
  public static synchronized VerbsRuntime get() {
    if (instance == null) {
      instance = load(VerbsRuntime.class.getClassLoader(), LibraryChoice.fromEnvironment());
    }
    return instance;
  }

  static VerbsRuntime load(ClassLoader parent, LibraryChoice choice) {
    String exportProblem = sunNioChProblem();
    if (exportProblem != null) {
      return new VerbsRuntime(null, null, exportProblem);
    }
    String file;
    try {
      switch (choice.source()) {
        case BUNDLED: {
          Path extracted = BundledLibrary.extract(parent);
          file = extracted.toString();
          break;
        }
        case PATH:
          file = choice.path().toString();
          break;
        default:
          file = choice.path() != null ? choice.path().toString() : null;
      }
    } catch (IOException | RuntimeException e) {
      return new VerbsRuntime(null, null, "the native library could not be prepared ("
          + choice + "): " + e.getMessage());
    }
    try {
      IsolatedVerbsClassLoader loader =
          new IsolatedVerbsClassLoader(parent, file, slf4jFallback(parent));
      String foreign = foreignLibrary(loader, choice, file);
      if (foreign != null) {
        return new VerbsRuntime(null, null, foreign);
      }
      Object info = Class.forName(VerbsClassNames.NATIVE_PROBE, true, loader).getMethod("probe").invoke(null);
      return new VerbsRuntime(loader, choice + (file != null ? " " + file : "") + ": " + info,
          null);
    } catch (InvocationTargetException e) {
      return new VerbsRuntime(null, null, "the native library failed to load (" + choice
          + "): " + rootMessage(e.getCause()) + hintFor(e.getCause()));
    } catch (IOException | ReflectiveOperationException | LinkageError | RuntimeException e) {
      return new VerbsRuntime(null, null, "the native library failed to load (" + choice
          + "): " + rootMessage(e) + hintFor(e));
    }
  }

  /**
   * Loads the library through {@code loader} and asks it for its identity (before DiSNI's
   * own initialization touches it). Null when it is this plugin's native layer of the
   * expected version; otherwise why it is refused. Load failures (a missing libibverbs)
   * propagate to the caller's handling.
   */
  static String foreignLibrary(ClassLoader loader, LibraryChoice choice, String file)
      throws ReflectiveOperationException {
    String where = choice + (file != null && choice.source() != LibraryChoice.Source.PATH
        ? " " + file : "");
    Object version;
    try {
      version = Class.forName(VerbsClassNames.NATIVE_IDENTITY, true, loader).getMethod("version")
          .invoke(null);
    } catch (InvocationTargetException e) {
      if (!(e.getCause() instanceof UnsatisfiedLinkError)) {
        throw e;
      }
      return "refused " + where + ": it is not this plugin's native layer (no "
          + "NativeIdentity.version, e.g. upstream DiSNI's libdisni, whose event "
          + "acknowledgement this plugin does not do, so teardown would hang); use -D"
          + LibraryChoice.PROPERTY + "=bundled or remove it";
    }
    if (!LibraryIdentity.EXPECTED.equals(version)) {
      return "refused " + where + ": it reports native layer '" + version + "', this plugin "
          + "needs '" + LibraryIdentity.EXPECTED + "'; use -D" + LibraryChoice.PROPERTY
          + "=bundled or install the library built with this plugin";
    }
    return null;
  }

  /** Null when the parent has slf4j (inside Spark); else the bundled slf4j-api, extracted. */
  static java.net.URL slf4jFallback(ClassLoader parent) throws IOException {
    try {
      Class.forName("org.slf4j.LoggerFactory", false, parent);
      return null;
    } catch (ClassNotFoundException e) {
      return BundledLibrary.extractResource(parent, "META-INF/shuffle-rdma/slf4j-api.jar",
          "slf4j-api").toUri().toURL();
    }
  }

  /** DiSNI reads buffer addresses through sun.nio.ch.DirectBuffer, which must be exported. */
  static String sunNioChProblem() {
    Module javaBase = Object.class.getModule();
    Module unnamed = VerbsRuntime.class.getClassLoader().getUnnamedModule();
    if (javaBase.isExported("sun.nio.ch", unnamed)) {
      return null;
    }
    return "the JVM does not export java.base/sun.nio.ch, which DiSNI needs; add "
        + "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED to spark.executor.extraJavaOptions "
        + "(Spark's launcher adds it by default; a plain 'java' command needs it too).";
  }

  static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return root.getClass().getSimpleName() + (m != null ? ": " + m : "");
  }

  private static String hintFor(Throwable t) {
    String m = rootMessage(t);
    if (m.contains("libibverbs") || m.contains("librdmacm")) {
      return " (install the rdma-core user-space libraries: apt-get install rdma-core "
          + "libibverbs1 librdmacm1 ibverbs-providers, or dnf install rdma-core libibverbs "
          + "librdmacm)";
    }
    if (m.contains("outdated")) {
      return " (an old libdisni is installed on java.library.path; set -D" + LibraryChoice.PROPERTY
          + "=bundled or remove it)";
    }
    return "";
  }

  public boolean loaded() {
    return loader != null;
  }

  /** The loader that defines DiSNI and the verbs implementation; null when loading failed. */
  public ClassLoader loader() {
    return loader;
  }

  /** Which library was loaded and what it reported; null when loading failed. */
  public String description() {
    return description;
  }

  /** Why loading failed, with the fix; null when it worked. */
  public String failure() {
    return failure;
  }
}
