/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Only the plugin's own libdisni is used: an upstream-like library (built by the native
 * Makefile's test target from test/fake_upstream.c, exporting a DiSNI entry point but not
 * our identity) on java.library.path is passed over in auto and refused when named.
 */
class LibraryIdentityTest {
  @TempDir
  Path tmp;
  private Path ours;
  private Path fake;

  @BeforeEach
  void libraries() {
    assumeFalse(Boolean.getBoolean("native.skip"), "built with -Dnative.skip=true");
    Path nativeDir = Paths.get(System.getProperty("native.layout",
        "target/native/layout.properties")).getParent();
    ours = nativeDir.resolve("libdisni.so");
    fake = nativeDir.resolve("fake-upstream/libdisni.so");
    assertTrue(Files.isRegularFile(ours) && Files.isRegularFile(fake),
        "native test build missing under " + nativeDir);
  }

  @Test
  void theElfCheckTellsOursFromOthers() throws IOException {
    assertTrue(LibraryIdentity.exportsIdentity(ours));
    assertFalse(LibraryIdentity.exportsIdentity(fake));
    Path text = Files.write(tmp.resolve("libdisni.so"), "not an ELF file".getBytes());
    assertFalse(LibraryIdentity.exportsIdentity(text));
    assertFalse(LibraryIdentity.exportsIdentity(tmp.resolve("missing.so")));
  }

  @Test
  void autoPassesOverAForeignInstalledLibraryAndTakesOurs() throws IOException {
    LibraryChoice c = LibraryChoice.decide("auto", fake.getParent().toString());
    assertEquals(LibraryChoice.Source.BUNDLED, c.source());
    assertEquals(fake, c.passedOver());
    Path dir = Files.createDirectory(tmp.resolve("ours"));
    Files.copy(ours, dir.resolve("libdisni.so"));
    LibraryChoice installed = LibraryChoice.decide("auto", dir.toString());
    assertEquals(LibraryChoice.Source.SYSTEM, installed.source());
    assertEquals(dir.resolve("libdisni.so"), installed.path());
  }

  @Test
  void aForeignLibraryNamedExplicitlyIsRefusedAfterLoading() {
    assumeFalse(VerbsRuntime.sunNioChProblem() != null, "needs sun.nio.ch exported");
    VerbsRuntime rt = VerbsRuntime.load(getClass().getClassLoader(),
        LibraryChoice.decide(fake.toString(), ""));
    assertFalse(rt.loaded());
    assertTrue(rt.failure().contains("not this plugin's native layer"), rt.failure());
    assertTrue(rt.failure().contains("=bundled"), rt.failure());
  }
}
