/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;

/**
 * Which libdisni.so to load: the one bundled in the jar, or one the user installed. Only the
 * plugin's own native layer is ever used (see {@link LibraryIdentity}): upstream DiSNI's
 * libdisni leaves event acknowledgement to Java code this plugin does not run, and teardown
 * would hang.
 *
 * <p>The rule, set by system property {@code shuffle.rdma.disni} or environment variable
 * {@code SHUFFLE_RDMA_DISNI} (property wins):
 * <ul>
 *   <li>{@code auto} (default): a {@code libdisni.so} found in a directory of
 *       {@code java.library.path} is used only if it exports this plugin's identity symbol
 *       (e.g. our library installed system-wide); otherwise, upstream DiSNI's or any other,
 *       it is passed over (and named in the loader's description) and the bundled one is
 *       extracted and loaded.</li>
 *   <li>{@code bundled}: always the bundled one.</li>
 *   <li>{@code system}: only {@code System.loadLibrary("disni")} on java.library.path; refused
 *       after loading unless it proves to be ours.</li>
 *   <li>an absolute path: exactly that file, on the same condition.</li>
 * </ul>
 */
public final class LibraryChoice {
  public static final String PROPERTY = "shuffle.rdma.disni";
  public static final String ENV = "SHUFFLE_RDMA_DISNI";

  /** Where the library comes from. */
  public enum Source { BUNDLED, SYSTEM, PATH }

  private final Source source;
  private final Path path;
  private final Path passedOver;

  private LibraryChoice(Source source, Path path) {
    this(source, path, null);
  }

  private LibraryChoice(Source source, Path path, Path passedOver) {
    this.source = source;
    this.path = path;
    this.passedOver = passedOver;
  }

  /** An installed libdisni that {@code auto} did not use because it is not ours; or null. */
  public Path passedOver() {
    return passedOver;
  }

  public Source source() {
    return source;
  }

  /** The installed or explicit file; null for BUNDLED (extracted later) and plain SYSTEM. */
  public Path path() {
    return path;
  }

  public static LibraryChoice fromEnvironment() {
    String setting = System.getProperty(PROPERTY);
    if (setting == null) {
      setting = System.getenv(ENV);
    }
    return decide(setting, System.getProperty("java.library.path", ""));
  }

  static LibraryChoice decide(String setting, String libraryPath) {
    String s = setting == null ? "auto" : setting.trim();
    switch (s.toLowerCase(Locale.ROOT)) {
      case "":
      case "auto": {
        Path installed = findOnPath(libraryPath);
        if (installed != null && LibraryIdentity.exportsIdentity(installed)) {
          return new LibraryChoice(Source.SYSTEM, installed);
        }
        return new LibraryChoice(Source.BUNDLED, null, installed);
      }
      case "bundled":
        return new LibraryChoice(Source.BUNDLED, null);
      case "system":
        return new LibraryChoice(Source.SYSTEM, findOnPath(libraryPath));
      default:
        Path p = Paths.get(s);
        if (!p.isAbsolute()) {
          throw new IllegalArgumentException(PROPERTY + "/" + ENV + " must be auto, bundled, "
              + "system or an absolute path to libdisni.so, not '" + s + "'");
        }
        return new LibraryChoice(Source.PATH, p);
    }
  }

  static Path findOnPath(String libraryPath) {
    for (String dir : libraryPath.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Paths.get(dir, System.mapLibraryName("disni"));
      if (Files.isRegularFile(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    switch (source) {
      case BUNDLED:
        return "bundled libdisni" + (passedOver == null ? "" : " (passed over " + passedOver
            + ": not this plugin's native layer, e.g. upstream DiSNI's)");
      case SYSTEM:
        return "installed libdisni" + (path != null ? " (" + path + ")" : " (java.library.path)");
      default:
        return "libdisni at " + path;
    }
  }
}
