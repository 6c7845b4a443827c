/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The libdisni.so packed into the plugin jar, extracted to a file the JVM can dlopen.
 *
 * <p>The copy lives in a per-user directory ({@code <java.io.tmpdir>/shuffle-rdma-<user>},
 * mode 0700, owned by this user, not a symlink) under a name that carries the library's
 * SHA-256, so executors of one user share one copy and a different build never overwrites
 * it. Both the packed bytes and an existing copy are checked against the SHA-256 that the
 * build recorded next to the library; a mismatch is rewritten (or fails), never loaded.
 */
public final class BundledLibrary {
  /** Resource path of the library inside the jar, for the only platform we build. */
  public static final String RESOURCE = "native/linux-x86_64/libdisni.so";
  static final String CHECKSUM_RESOURCE = RESOURCE + ".sha256";

  private BundledLibrary() {}

  /** True when this jar carries the native library for this platform. */
  public static boolean isPacked(ClassLoader loader) {
    return loader.getResource(RESOURCE) != null;
  }

  /** The platform the bundled library is built for, or why this JVM cannot use it. */
  public static String platformProblem() {
    String os = System.getProperty("os.name", "");
    String arch = System.getProperty("os.arch", "");
    if (!os.toLowerCase().startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      return "the bundled libdisni is built for linux-x86_64, this JVM runs on " + os + "/" + arch;
    }
    return null;
  }

  /** Extracts (or reuses) the library in the default per-user directory. */
  public static Path extract(ClassLoader loader) throws IOException {
    String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
    return extract(loader, Paths.get(System.getProperty("java.io.tmpdir"), "shuffle-rdma-" + user));
  }

  static Path extract(ClassLoader loader, Path dir) throws IOException {
    return extractVerified(loader, RESOURCE, "libdisni", dir);
  }

  /**
   * Extracts (or reuses) a native library packed at {@code resource} with the SHA-256 the
   * build recorded at {@code resource + ".sha256"} (libdisni.so, libfdpass.so), to the
   * per-user directory, under {@code <stem>-<sha256 prefix>.so}.
   */
  public static Path extractVerified(ClassLoader loader, String resource, String stem)
      throws IOException {
    String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
    return extractVerified(loader, resource, stem,
        Paths.get(System.getProperty("java.io.tmpdir"), "shuffle-rdma-" + user));
  }

  static Path extractVerified(ClassLoader loader, String resource, String stem, Path dir)
      throws IOException {
    String problem = platformProblem();
    if (problem != null) {
      throw new IOException(problem);
    }
    String name = resource.substring(resource.lastIndexOf('/') + 1);
    byte[] library = read(loader, resource);
    String expected = new String(read(loader, resource + ".sha256"), StandardCharsets.US_ASCII)
        .trim();
    String actual = sha256(library);
    if (!actual.equals(expected)) {
      throw new IOException("the " + name + " packed in the jar is corrupt (SHA-256 " + actual
          + ", build recorded " + expected + "); rebuild or re-download the plugin jar");
    }
    Path privateDir = privateDirectory(dir);
    Path target = privateDir.resolve(stem + "-" + expected.substring(0, 16) + ".so");
    if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)
        && sha256(Files.readAllBytes(target)).equals(expected)) {
      return target;
    }
    Path tmp = Files.createTempFile(privateDir, stem + "-", ".tmp");
    try {
      Files.write(tmp, library);
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx------"));
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    return target;
  }

  /**
   * Extracts another packed resource (no recorded checksum) to the per-user directory under
   * a name carrying its own SHA-256, reusing an intact copy.
   */
  static Path extractResource(ClassLoader loader, String resource, String stem)
      throws IOException {
    byte[] bytes = read(loader, resource);
    String sum = sha256(bytes);
    String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
    Path dir = privateDirectory(Paths.get(System.getProperty("java.io.tmpdir"),
        "shuffle-rdma-" + user));
    Path target = dir.resolve(stem + "-" + sum.substring(0, 16) + ".jar");
    if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)
        && sha256(Files.readAllBytes(target)).equals(sum)) {
      return target;
    }
    Path tmp = Files.createTempFile(dir, stem + "-", ".tmp");
    try {
      Files.write(tmp, bytes);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return target;
  }

  /** Creates or checks the per-user directory: ours, a real directory, mode 0700. */
  static Path privateDirectory(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      try {
        Files.createDirectories(dir.getParent());
        Files.createDirectory(dir,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // another executor of this user created it first; checked below
      }
    }
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException(dir + " is not a directory (or is a symlink); remove it so the "
          + "native library can be extracted safely");
    }
    String owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
    String me = System.getProperty("user.name");
    if (me != null && !owner.equals(me)) {
      throw new IOException(dir + " belongs to " + owner + ", not " + me
          + "; remove it or point java.io.tmpdir elsewhere");
    }
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    return dir;
  }

  private static byte[] read(ClassLoader loader, String resource) throws IOException {
    try (InputStream in = loader.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("this plugin jar carries no " + resource + " (built with "
            + "-Dnative.skip=true?); rebuild with libibverbs-dev and librdmacm-dev installed");
      }
      return in.readAllBytes();
    }
  }

  static String sha256(byte[] bytes) {
    try {
      // Not java.util.HexFormat: the Spark 3.5 jars are compiled for Java 11.
      StringBuilder hex = new StringBuilder(64);
      for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) {
        hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
    }
  }
}
