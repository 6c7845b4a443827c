/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes image of conf-templates/kubernetes/image/: the packages its Dockerfile
 * installs provide every library libdisni.so links to, and its entrypoint wrapper gives the
 * non-root Spark user (uid 185, as in the apache/spark images) the raised memlock limit and
 * an effective CAP_IPC_LOCK, which a plain uid drop does not. The wrapper runs for real: as
 * root it raises the limit, drops to uid 185 with setpriv and execs a stand-in for Spark's
 * /opt/entrypoint.sh that prints what it got.
 */
class KubernetesImageTest {
  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."));
  private static final Path IMAGE = ROOT.resolve("conf-templates/kubernetes/image");
  private static final Path WRAPPER = IMAGE.resolve("rdma-entrypoint.sh");
  private static final int CAP_IPC_LOCK = 14;
  private static final int CAP_SYS_RESOURCE = 24;
  /** Spark's user in the apache/spark images. */
  private static final String SPARK_UID = "185";
  /** What the base image brings: glibc (libc.so.6, the dynamic loader). */
  private static final Set<String> BASE_IMAGE_PACKAGES = Set.of("libc6");

  @TempDir
  Path tmp;

  // ---- the Dockerfile ----

  private static String dockerfile() throws IOException {
    return Files.readString(IMAGE.resolve("Dockerfile"), StandardCharsets.UTF_8);
  }

  /** The packages of the Dockerfile's apt-get install (line continuations joined). */
  static Set<String> installedPackages(String dockerfile) {
    String joined = dockerfile.replaceAll("\\\\\\s*\\n", " ");
    Set<String> pkgs = new LinkedHashSet<>();
    Matcher m = Pattern.compile("apt-get install ([^&\\n]*)").matcher(joined);
    while (m.find()) {
      for (String w : m.group(1).trim().split("\\s+")) {
        if (!w.startsWith("-") && !w.isEmpty()) {
          pkgs.add(w);
        }
      }
    }
    return pkgs;
  }

  @Test
  void dockerfileBuildsOnSparksImageWithVersionArgumentsAndTheWrapper() throws IOException {
    String d = dockerfile();
    assertTrue(d.contains("ARG SPARK_VERSION="), "Spark version as a build argument");
    assertTrue(d.contains("ARG BASE_IMAGE="), "base image as a build argument");
    assertTrue(Pattern.compile("(?m)^FROM \\$\\{BASE_IMAGE}:\\$\\{SPARK_VERSION}$").matcher(d)
        .find(), "FROM ${BASE_IMAGE}:${SPARK_VERSION}");
    assertTrue(d.contains("COPY conf-templates/kubernetes/image/rdma-entrypoint.sh "
        + "/opt/shuffle-rdma/rdma-entrypoint.sh"), d);
    assertTrue(d.contains("ENTRYPOINT [\"/opt/shuffle-rdma/rdma-entrypoint.sh\"]"), d);
    assertTrue(d.contains("/opt/shuffle-rdma/shuffle-rdma.jar"), d);
    Set<String> pkgs = installedPackages(d);
    assertTrue(pkgs.contains("ibverbs-providers"), "no NIC providers in " + pkgs);
    assertTrue(pkgs.contains("util-linux"), "setpriv (util-linux) for the wrapper: " + pkgs);
    assertTrue(Files.isExecutable(WRAPPER), WRAPPER + " is not executable");
  }

  @Test
  void dockerfilePackagesProvideEveryLibraryLibdisniNeeds() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("native.skip"),
        "native layer not built in this build (native.skip): no libdisni.so to check");
    Path lib = Paths.get(System.getProperty("native.layout",
        "target/native/layout.properties")).resolveSibling("libdisni.so");
    assertTrue(Files.isRegularFile(lib), lib + " missing (mvn -pl shuffle-rdma compile)");
    Assumptions.assumeTrue(onPath("dpkg"), "no dpkg on this host: cannot map sonames to "
        + "Debian packages");
    Result elf = run(List.of("readelf", "-d", lib.toString()), Map.of());
    assertEquals(0, elf.rc, "readelf -d (binutils, installed with gcc): " + elf.out);
    List<String> needed = new ArrayList<>();
    Matcher m = Pattern.compile("\\(NEEDED\\)\\s+Shared library: \\[([^]]+)]").matcher(elf.out);
    while (m.find()) {
      needed.add(m.group(1));
    }
    assertTrue(needed.contains("libibverbs.so.1") && needed.contains("librdmacm.so.1"),
        "libdisni.so should link rdma-core: " + needed);
    Set<String> image = new LinkedHashSet<>(installedPackages(dockerfile()));
    image.addAll(BASE_IMAGE_PACKAGES);
    Map<String, Set<String>> missing = new LinkedHashMap<>();
    for (String soname : needed) {
      Result owner = run(List.of("dpkg", "-S", "*/" + soname), Map.of());
      assertEquals(0, owner.rc, "no installed package here has " + soname + ": " + owner.out);
      Set<String> pkgs = new LinkedHashSet<>();
      for (String line : owner.out.split("\n")) {
        int colon = line.indexOf(": ");
        if (colon > 0) {
          for (String p : line.substring(0, colon).split(",\\s*")) {
            pkgs.add(p.replaceAll(":.*", ""));
          }
        }
      }
      if (pkgs.stream().noneMatch(image::contains)) {
        missing.put(soname, pkgs);
      }
    }
    assertEquals(Map.of(), missing, "libraries libdisni.so needs (NEEDED " + needed
        + ") that neither the Dockerfile's packages " + installedPackages(dockerfile())
        + " nor the base image (" + BASE_IMAGE_PACKAGES + ") provide; soname -> packages "
        + "that have it");
  }

  // ---- the entrypoint wrapper, for real ----

  private static boolean onPath(String tool) {
    return Arrays.stream(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
        .anyMatch(d -> Files.isExecutable(Paths.get(d, tool)));
  }

  private static long capabilities(String set) throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith(set + ":")) {
        return Long.parseUnsignedLong(line.substring(set.length() + 1).trim(), 16);
      }
    }
    throw new IOException("no " + set + " in /proc/self/status");
  }

  private static boolean root() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("Uid:")) {
        return line.substring(4).trim().split("\\s+")[1].equals("0");
      }
    }
    return false;
  }

  private void assumeRootWithTools() throws IOException {
    Assumptions.assumeTrue(root(), "not root: the entrypoint test drops from root to uid "
        + SPARK_UID + " with setpriv, which only root may do (run the build as root to run it)");
    for (String tool : new String[] {"setpriv", "prlimit", "sh"}) {
      if (!onPath(tool)) {
        fail(tool + " not found (util-linux; .ci/run installs it)");
      }
    }
  }

  /** A stand-in for Spark's /opt/entrypoint.sh, runnable by uid 185: prints what it got. */
  private Path sparkEntrypoint() throws IOException {
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path p = tmp.resolve("spark-entrypoint.sh");
    Files.writeString(p, "#!/bin/sh\n"
        + "echo \"uid=$(id -u) memlock=$(ulimit -l) "
        + "capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) args=$*\"\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p;
  }

  private static final class Result {
    final int rc;
    final String out;

    Result(int rc, String out) {
      this.rc = rc;
      this.out = out;
    }

    String field(String name) {
      Matcher m = Pattern.compile("(?m)\\b" + name + "=(\\S*)").matcher(out);
      return m.find() ? m.group(1) : "(none in: " + out + ")";
    }

    boolean ipcLock() {
      return (Long.parseUnsignedLong(field("capeff"), 16) & (1L << CAP_IPC_LOCK)) != 0;
    }
  }

  private static Result run(List<String> cmd, Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("timed out: " + cmd);
    }
    return new Result(p.exitValue(),
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  /** Starts with memlock soft 1 MiB, hard 8 MiB (the container runtimes' default hard). */
  private static List<String> lowMemlock(String... cmd) {
    List<String> l = new ArrayList<>(List.of("prlimit", "--memlock=1048576:8388608"));
    l.addAll(Arrays.asList(cmd));
    return l;
  }

  @Test
  void plainDropToTheSparkUserKeepsTheLowLimitAndNoIpcLock() throws Exception {
    assumeRootWithTools();
    Result r = run(lowMemlock("setpriv", "--reuid", SPARK_UID, "--regid", SPARK_UID,
        "--clear-groups", sparkEntrypoint().toString(), "executor"), Map.of());
    assertEquals(0, r.rc, r.out);
    assertEquals(SPARK_UID, r.field("uid"), r.out);
    assertEquals("1024", r.field("memlock"), r.out);
    assertFalse(r.ipcLock(), "a non-root process gets no effective capability: " + r.out);
  }

  @Test
  void wrapperRaisesMemlockAndKeepsIpcLockForTheSparkUser() throws Exception {
    assumeRootWithTools();
    Result r = run(lowMemlock(WRAPPER.toString(), "executor", "--flag"),
        Map.of("SPARK_ENTRYPOINT", sparkEntrypoint().toString()));
    assertEquals(0, r.rc, r.out);
    assertEquals(SPARK_UID, r.field("uid"), r.out);
    assertEquals("executor", r.field("args"), r.out);
    assertTrue(r.out.contains("args=executor --flag"), r.out);
    // With CAP_SYS_RESOURCE (a root shell on a host) the hard limit goes to unlimited; in a
    // container without it (the runtimes' default) the soft limit goes up to the hard one.
    boolean sysResource = (capabilities("CapEff") & (1L << CAP_SYS_RESOURCE)) != 0;
    assertEquals(sysResource ? "unlimited" : "8192", r.field("memlock"), r.out);
    if ((capabilities("CapEff") & (1L << CAP_IPC_LOCK)) != 0) {
      assertTrue(r.ipcLock(), "CAP_IPC_LOCK should be effective for uid " + SPARK_UID
          + " (ambient): " + r.out);
    }
  }

  @Test
  void wrapperSetsAConfiguredLimit() throws Exception {
    assumeRootWithTools();
    Result r = run(lowMemlock(WRAPPER.toString(), "driver"),
        Map.of("SPARK_ENTRYPOINT", sparkEntrypoint().toString(), "SHUFFLE_RDMA_MEMLOCK", "4096"));
    assertEquals(0, r.rc, r.out);
    assertEquals(SPARK_UID, r.field("uid"), r.out);
    assertEquals("4096", r.field("memlock"), r.out);
  }

  @Test
  void wrapperInAContainerWithoutIpcLockStillStartsSpark() throws Exception {
    assumeRootWithTools();
    // The pod spec did not add IPC_LOCK: not in the bounding set, so root lacks it too.
    Result r = run(lowMemlock("setpriv", "--bounding-set=-ipc_lock", WRAPPER.toString(),
        "executor"), Map.of("SPARK_ENTRYPOINT", sparkEntrypoint().toString()));
    assertEquals(0, r.rc, r.out);
    assertEquals(SPARK_UID, r.field("uid"), r.out);
    assertFalse(r.ipcLock(), r.out);
    assertTrue(r.out.contains("no CAP_IPC_LOCK in this container"), r.out);
  }

  /**
   * The image's layout for the node service (node-service-daemonset.yaml): the launcher at
   * /opt/shuffle-rdma/bin finds the jar the Dockerfile puts at /opt/shuffle-rdma. Laid out in
   * a temporary directory with a stand-in java that prints its arguments; the launcher checks
   * Spark's jars first, then the plugin jar.
   */
  @Test
  void nodeServiceLauncherFindsTheImagesJar() throws Exception {
    Path opt = tmp.resolve("opt/shuffle-rdma");
    Files.createDirectories(opt.resolve("bin"));
    Path launcher = opt.resolve("bin/shuffle-rdma-service");
    Files.copy(ROOT.resolve("bin/shuffle-rdma-service"), launcher);
    Path javaHome = tmp.resolve("java");
    Files.createDirectories(javaHome.resolve("bin"));
    Path java = javaHome.resolve("bin/java");
    Files.writeString(java, "#!/bin/sh\necho \"java $*\"\n");
    assertTrue(java.toFile().setExecutable(true));
    Map<String, String> noSpark = Map.of("SPARK_HOME", tmp.resolve("no-spark").toString(),
        "SHUFFLE_RDMA_JAR", "", "JAVA_HOME", javaHome.toString());
    Result withoutSpark = run(List.of("bash", launcher.toString(), "--socket", "/x"), noSpark);
    assertEquals(2, withoutSpark.rc, withoutSpark.out);
    assertTrue(withoutSpark.out.contains("needs Spark's jars"), withoutSpark.out);
    Path sparkHome = tmp.resolve("spark");
    Files.createDirectories(sparkHome.resolve("jars"));
    Map<String, String> env = Map.of("SPARK_HOME", sparkHome.toString(),
        "SHUFFLE_RDMA_JAR", "", "JAVA_HOME", javaHome.toString());
    Result without = run(List.of("bash", launcher.toString(), "--socket", "/x"), env);
    assertEquals(2, without.rc, without.out);
    assertTrue(without.out.contains("shuffle-rdma jar not found"), without.out);
    Files.writeString(opt.resolve("shuffle-rdma.jar"), "");
    Result with = run(List.of("bash", launcher.toString(), "--socket", "/x"), env);
    assertEquals(0, with.rc, with.out);
    assertTrue(with.out.contains(opt.resolve("shuffle-rdma.jar") + ":" + sparkHome + "/jars/*"),
        with.out);
  }
}
