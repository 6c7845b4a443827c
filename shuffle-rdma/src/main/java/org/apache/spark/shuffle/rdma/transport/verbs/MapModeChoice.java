/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.nio.channels.FileChannel;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How the verbs transport maps map output files for registration, per kernel
 * ({@code spark.shuffle.rdma.verbs.mapMode}). What the kernel does with a long-term pin of a
 * READ-only registration (ib_umem_get):
 *
 * <ul>
 *   <li>from 6.2: pins without FOLL_WRITE; a SHARED read-only mapping pins the page-cache
 *       pages themselves. Nothing is copied.
 *   <li>before 6.2 (Debian 12, RHEL 8/9): pins with FOLL_WRITE|FOLL_FORCE whatever the access
 *       flags. A SHARED read-only mapping refuses that (EFAULT). A SHARED read-write mapping of
 *       the file opened read-write takes it and pins the page-cache pages (marked dirty, so
 *       they may be written back once, with the same bytes: nothing writes to them). A
 *       PRIVATE mapping takes it by making a private anonymous copy of every page: the map
 *       output is then held twice, pinned, and counts as executor memory.
 * </ul>
 *
 * Vendor kernels backport the 6.2 behaviour to older release numbers (and a release string may
 * not parse), so {@code auto} does not trust the version: it always tries SHARED first, and
 * the kernel's refusal of that pin (EFAULT, {@link MappingRefusal}) moves it to
 * SHARED_WRITABLE, then PRIVATE, for the executor's lifetime. The version only says whether
 * the refusal is expected (logged at INFO) or news (WARN). Pure; unit-tested per kernel.
 */
public final class MapModeChoice {

  /** A mapping mode and the JDK map mode that makes it. */
  public enum Mode {
    SHARED(FileChannel.MapMode.READ_ONLY, "shared read-only (page cache pinned, no copy)"),
    SHARED_WRITABLE(FileChannel.MapMode.READ_WRITE,
        "shared read-write of the file opened read-write (page cache pinned, no copy; never "
            + "written)"),
    PRIVATE(FileChannel.MapMode.PRIVATE,
        "private copy-on-write (the kernel pins a private copy of every page)");

    public final FileChannel.MapMode fileMode;
    public final String description;

    Mode(FileChannel.MapMode fileMode, String description) {
      this.fileMode = fileMode;
      this.description = description;
    }
  }

  private static final Pattern RELEASE = Pattern.compile("^(\\d+)\\.(\\d+)");

  public final Mode mode;
  /** True when a refused registration may fall back to the next mode (the setting was auto). */
  public final boolean mayFallBack;
  /** True when the kernel's release says it probably refuses a SHARED pin (before 6.2). */
  public final boolean refusalExpected;
  public final String reason;

  private MapModeChoice(Mode mode, boolean mayFallBack, String reason) {
    this(mode, mayFallBack, false, reason);
  }

  private MapModeChoice(Mode mode, boolean mayFallBack, boolean refusalExpected,
      String reason) {
    this.mode = mode;
    this.mayFallBack = mayFallBack;
    this.refusalExpected = refusalExpected;
    this.reason = reason;
  }

  /**
   * @param setting auto, shared, sharedWritable or private (as validated by the config)
   * @param kernelRelease e.g. "6.1.0-27-amd64" (os.version / uname -r)
   */
  public static MapModeChoice choose(String setting, String kernelRelease) {
    switch (setting.toLowerCase(Locale.ROOT)) {
      case "shared":
        return new MapModeChoice(Mode.SHARED, false, "spark.shuffle.rdma.verbs.mapMode=shared");
      case "sharedwritable":
        return new MapModeChoice(Mode.SHARED_WRITABLE, false,
            "spark.shuffle.rdma.verbs.mapMode=sharedWritable");
      case "private":
        return new MapModeChoice(Mode.PRIVATE, false, "spark.shuffle.rdma.verbs.mapMode=private");
      case "auto":
        break;
      default:
        throw new IllegalArgumentException("spark.shuffle.rdma.verbs.mapMode must be auto, "
            + "shared, sharedWritable or private: " + setting);
    }
    int[] v = parse(kernelRelease);
    if (v == null) {
      return new MapModeChoice(Mode.SHARED, true, true, "kernel release '" + kernelRelease
          + "' not understood: tried first, shared read-write if the kernel refuses the pin");
    }
    boolean readOnlyPins = v[0] > 6 || (v[0] == 6 && v[1] >= 2);
    return readOnlyPins
        ? new MapModeChoice(Mode.SHARED, true, "kernel " + kernelRelease
            + " (>= 6.2) pins read-only registrations without FOLL_WRITE")
        : new MapModeChoice(Mode.SHARED, true, true, "kernel " + kernelRelease
            + " (< 6.2) usually pins with FOLL_WRITE|FOLL_FORCE, which a read-only shared "
            + "mapping refuses; tried first (vendor kernels backport 6.2's pin), shared "
            + "read-write on refusal");
  }

  /** {major, minor}, or null. */
  static int[] parse(String release) {
    if (release == null) {
      return null;
    }
    Matcher m = RELEASE.matcher(release.trim());
    if (!m.find()) {
      return null;
    }
    return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
  }

  @Override
  public String toString() {
    return mode + ": " + mode.description + " [" + reason + "]";
  }
}
