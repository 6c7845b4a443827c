/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import java.io.IOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Loads DiSNI and the verbs transport implementation child-first, so that DiSNI's
 * {@code System.loadLibrary("disni")} (in NativeDispatcher's static initializer) asks
 * <em>this</em> loader's {@link #findLibrary} and gets the library chosen by
 * {@link LibraryChoice}: no java.library.path, LD_LIBRARY_PATH or extraLibraryPath needed.
 *
 * <p>Only classes under {@link #ISOLATED} are defined here; everything else (the transport
 * SPI, Spark, Netty, slf4j) comes from the parent, so the transport this loader creates is
 * an ordinary {@code ShuffleTransport} to the rest of the plugin.
 */
public final class IsolatedVerbsClassLoader extends URLClassLoader {
  static {
    ClassLoader.registerAsParallelCapable();
  }

  /** Package prefixes defined by this loader. */
  public static final String[] ISOLATED = {
    "com.ibm.disni.",
    "org.apache.spark.shuffle.rdma.transport.verbs.impl.",
    "org.apache.spark.shuffle.rdma.transport.verbs.loader.isolated.",
  };

  /** Marker classes whose code sources this loader reads. */
  static final String[] MARKERS = {
    VerbsClassNames.resource(VerbsClassNames.DISNI_DISPATCHER),
    VerbsClassNames.resource(VerbsClassNames.NATIVE_PROBE),
    VerbsClassNames.resource(VerbsClassNames.NATIVE_IDENTITY),
  };

  private final String libraryFile;
  private final boolean ownSlf4j;

  /**
   * @param libraryFile absolute path of libdisni.so to load, or null to let the JVM search
   *     java.library.path (the SYSTEM choice)
   * @param slf4jJar a slf4j-api jar to define org.slf4j from when the parent has none
   *     (standalone 'java -jar', no Spark), else null
   */
  public IsolatedVerbsClassLoader(ClassLoader parent, String libraryFile, URL slf4jJar)
      throws IOException {
    super(withOptional(codeSources(parent), slf4jJar), parent);
    this.libraryFile = libraryFile;
    this.ownSlf4j = slf4jJar != null;
  }

  private static URL[] withOptional(URL[] urls, URL extra) {
    if (extra == null) {
      return urls;
    }
    URL[] all = java.util.Arrays.copyOf(urls, urls.length + 1);
    all[urls.length] = extra;
    return all;
  }

  static URL[] codeSources(ClassLoader parent) throws IOException {
    Set<URL> urls = new LinkedHashSet<>();
    for (String marker : MARKERS) {
      URL u = parent.getResource(marker);
      if (u == null) {
        throw new IOException(marker.replace('/', '.') + " is not on the classpath (DiSNI "
            + "must be inside the plugin jar)");
      }
      urls.add(base(u, marker));
    }
    return urls.toArray(new URL[0]);
  }

  /** jar:file:/x.jar!/a/B.class becomes file:/x.jar; file:/dir/a/B.class becomes file:/dir/. */
  static URL base(URL resource, String marker) throws IOException {
    if ("jar".equals(resource.getProtocol())) {
      return ((JarURLConnection) resource.openConnection()).getJarFileURL();
    }
    String s = resource.toString();
    if (!s.endsWith(marker)) {
      throw new IOException("cannot locate the code source of " + resource);
    }
    return new URL(s.substring(0, s.length() - marker.length()));
  }

  static boolean isolated(String className) {
    for (String prefix : ISOLATED) {
      if (className.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!isolated(name) && !(ownSlf4j && name.startsWith("org.slf4j."))) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        c = findClass(name);
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  @Override
  protected String findLibrary(String libname) {
    if ("disni".equals(libname) && libraryFile != null) {
      return libraryFile;
    }
    return null; // the JVM then searches java.library.path
  }
}
