/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.verbs.VerbsTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BundledLibraryTest {
  @TempDir
  Path tmp;

  private static ClassLoader cl() {
    return BundledLibraryTest.class.getClassLoader();
  }

  @Test
  void extractsIntoAPrivateDirectoryAndVerifiesTheChecksum() throws IOException {
    assumeFalse(Boolean.getBoolean("native.skip"));
    assertTrue(BundledLibrary.isPacked(cl()), "libdisni.so must be packed as a resource");
    Path dir = tmp.resolve("shuffle-rdma-test");
    Path lib = BundledLibrary.extract(cl(), dir);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    assertTrue(lib.getFileName().toString().matches("libdisni-[0-9a-f]{16}\\.so"));
    byte[] first = Files.readAllBytes(lib);
    // A corrupted copy is replaced, not loaded.
    Files.write(lib, new byte[] {1, 2, 3});
    Path again = BundledLibrary.extract(cl(), dir);
    assertEquals(lib, again);
    assertTrue(java.util.Arrays.equals(first, Files.readAllBytes(again)));
  }

  @Test
  void refusesADirectoryThatIsASymlink() throws IOException {
    Path real = Files.createDirectory(tmp.resolve("real"));
    Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
    IOException e = assertThrows(IOException.class, () -> BundledLibrary.privateDirectory(link));
    assertTrue(e.getMessage().contains("symlink"), e.getMessage());
  }

  @Test
  void choiceRules() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("libs"));
    assertEquals(LibraryChoice.Source.BUNDLED, LibraryChoice.decide(null, dir.toString()).source());
    // An installed file that does not prove to be ours is passed over in auto.
    Files.write(dir.resolve("libdisni.so"), new byte[0]);
    LibraryChoice installed = LibraryChoice.decide("auto", "/nonexistent:" + dir);
    assertEquals(LibraryChoice.Source.BUNDLED, installed.source());
    assertEquals(dir.resolve("libdisni.so"), installed.passedOver());
    assertTrue(installed.toString().contains("passed over"), installed.toString());
    assertEquals(LibraryChoice.Source.BUNDLED, LibraryChoice.decide("bundled", dir.toString()).source());
    assertEquals(LibraryChoice.Source.PATH, LibraryChoice.decide("/opt/x/libdisni.so", "").source());
    assertThrows(IllegalArgumentException.class, () -> LibraryChoice.decide("relative.so", ""));
  }

  @Test
  void isolatesOnlyDisniAndTheVerbsImplementation() {
    assertTrue(IsolatedVerbsClassLoader.isolated(VerbsClassNames.DISNI_DISPATCHER));
    assertTrue(IsolatedVerbsClassLoader.isolated(VerbsClassNames.TRANSPORT));
    assertTrue(!IsolatedVerbsClassLoader.isolated(ShuffleTransport.class.getName()));
    assertTrue(!IsolatedVerbsClassLoader.isolated(VerbsTransportProvider.class.getName()));
    assertTrue(IsolatedVerbsClassLoader.isolated(VerbsClassNames.NATIVE_IDENTITY));
    assertTrue(!IsolatedVerbsClassLoader.isolated(LibraryIdentity.class.getName()));
  }
}
