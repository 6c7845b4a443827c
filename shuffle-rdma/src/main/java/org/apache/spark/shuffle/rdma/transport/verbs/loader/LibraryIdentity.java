/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Tells the plugin's own libdisni from any other (upstream DiSNI's, an old build): only ours
 * exports {@link #SYMBOL}, and only a library whose {@code NativeIdentity.version()} returns
 * {@link #EXPECTED} is used. The Java side relies on our library acknowledging rdma_cm and CQ
 * events itself; with upstream's, teardown hangs in {@code ibv_destroy_cq}.
 *
 * <p>{@link #exportsIdentity} reads the ELF dynamic symbol table without loading the file, so
 * {@code auto} can pass over a foreign library instead of loading it into the JVM.
 */
public final class LibraryIdentity {
  /** The version string identity.c returns (SHUFFLE_RDMA_NATIVE_VERSION in jni_util.h). */
  public static final String EXPECTED = "shuffle-rdma-native 4";
  public static final String SYMBOL =
      "Java_org_apache_spark_shuffle_rdma_transport_verbs_loader_isolated_NativeIdentity_version";

  private static final int SHT_DYNSYM = 11;
  private static final long MAX_FILE = 256L << 20;

  private LibraryIdentity() {}

  /** True when {@code file} is a 64-bit little-endian ELF object defining {@link #SYMBOL}. */
  public static boolean exportsIdentity(Path file) {
    try {
      if (!Files.isRegularFile(file) || Files.size(file) > MAX_FILE) {
        return false;
      }
      return definesSymbol(ByteBuffer.wrap(Files.readAllBytes(file)), SYMBOL);
    } catch (IOException | RuntimeException e) {
      return false; // unreadable or malformed: certainly not proven ours
    }
  }

  static boolean definesSymbol(ByteBuffer elf, String name) {
    elf.order(ByteOrder.LITTLE_ENDIAN);
    if (elf.limit() < 64 || elf.getInt(0) != 0x464c457f || elf.get(4) != 2 || elf.get(5) != 1) {
      return false; // not ELF, not 64-bit or not little-endian
    }
    long shoff = elf.getLong(0x28);
    int shentsize = elf.getShort(0x3a) & 0xffff;
    int shnum = elf.getShort(0x3c) & 0xffff;
    byte[] wanted = name.getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < shnum; i++) {
      int sh = Math.toIntExact(shoff + (long) i * shentsize);
      if (elf.getInt(sh + 4) != SHT_DYNSYM) {
        continue;
      }
      int symOff = Math.toIntExact(elf.getLong(sh + 0x18));
      long symSize = elf.getLong(sh + 0x20);
      long entSize = elf.getLong(sh + 0x38);
      int strSh = Math.toIntExact(shoff + (long) elf.getInt(sh + 0x28) * shentsize);
      int strOff = Math.toIntExact(elf.getLong(strSh + 0x18));
      for (long s = 0; entSize > 0 && s + entSize <= symSize; s += entSize) {
        int sym = Math.toIntExact(symOff + s);
        int shndx = elf.getShort(sym + 6) & 0xffff;
        if (shndx != 0 && nameEquals(elf, strOff + elf.getInt(sym), wanted)) {
          return true; // defined here, not an import
        }
      }
    }
    return false;
  }

  private static boolean nameEquals(ByteBuffer elf, int at, byte[] wanted) {
    if (at < 0 || at + wanted.length >= elf.limit()) {
      return false;
    }
    for (int i = 0; i < wanted.length; i++) {
      if (elf.get(at + i) != wanted[i]) {
        return false;
      }
    }
    return elf.get(at + wanted.length) == 0;
  }
}
