/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every script a user runs ({@code bin/*} and the integration harnesses that take options)
 * answers {@code --help} and {@code -h} with its usage on stdout and exit status 0, and does
 * nothing else: run from an empty directory with an empty HOME, no SPARK_HOME and a PATH whose
 * first entry holds stand-ins for the tools a script would install, build or deploy with
 * (mvn, apt-get, java, gcc, git, ...): no stand-in is called, no file appears or changes in
 * the repository (its build output {@code shuffle-rdma/target} aside), in HOME or in the
 * working directory.
 */
class ScriptHelpTest {
  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."))
      .toAbsolutePath().normalize();
  /** The harnesses outside bin/ that take options. */
  private static final List<String> HARNESSES = List.of("integration-tests/softroce/run",
      "integration-tests/benchmarks/run", "integration-tests/benchmarks/transport",
      "integration-tests/benchmarks/client-cost");
  /** Commands whose call would be a side effect (or a slow step) of asking for the usage. */
  private static final List<String> TRAPPED = List.of("mvn", "apt-get", "apt", "dpkg", "java",
      "javac", "jar", "gcc", "make", "unzip", "ip", "tc", "jq", "git", "sudo", "curl", "wget",
      "debootstrap", "qemu-system-x86_64", "spark-submit", "systemctl");

  @TempDir
  Path tmp;

  /** Every executable script directly in bin/, then the harnesses. */
  static List<String> scripts() throws IOException {
    List<String> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(ROOT.resolve("bin"))) {
      s.filter(p -> Files.isRegularFile(p) && Files.isExecutable(p)).sorted()
          .forEach(p -> out.add(ROOT.relativize(p).toString()));
    }
    out.addAll(HARNESSES);
    return out;
  }

  @Test
  void everyScriptPrintsItsUsageAndDoesNothingElse() throws Exception {
    List<String> scripts = scripts();
    assertTrue(scripts.contains("bin/run-demo") && scripts.contains("bin/shuffle-rdma-service")
        && scripts.size() >= 12, scripts.toString());
    Path traps = Files.createDirectories(tmp.resolve("traps"));
    Path calls = tmp.resolve("calls");
    for (String cmd : TRAPPED) {
      Path t = traps.resolve(cmd);
      Files.writeString(t, "#!/bin/sh\necho \"" + cmd + " $*\" >> '" + calls + "'\nexit 1\n");
      Files.setPosixFilePermissions(t, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Path javaHome = Files.createDirectories(tmp.resolve("jdk/bin"));
    Files.createSymbolicLink(javaHome.resolve("java"), traps.resolve("java"));
    Path home = Files.createDirectories(tmp.resolve("home"));
    Path cwd = Files.createDirectories(tmp.resolve("cwd"));
    Path scratch = Files.createDirectories(tmp.resolve("tmp"));

    Map<String, Long> before = snapshot();
    List<String> failures = new ArrayList<>();
    for (String script : scripts) {
      for (String flag : List.of("--help", "-h")) {
        ProcessBuilder pb = new ProcessBuilder(ROOT.resolve(script).toString(), flag)
            .directory(cwd.toFile())
            .redirectOutput(tmp.resolve("out").toFile())
            .redirectError(tmp.resolve("err").toFile());
        Map<String, String> env = pb.environment();
        env.clear();
        env.put("PATH", traps + ":/usr/local/bin:/usr/bin:/bin");
        env.put("HOME", home.toString());
        env.put("TMPDIR", scratch.toString());
        env.put("JAVA_HOME", javaHome.getParent().toString());
        env.put("LANG", "C.UTF-8");
        Process p = pb.start();
        String what = script + " " + flag;
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor();
          failures.add(what + ": still running after 30 s");
          continue;
        }
        String out = Files.readString(tmp.resolve("out"), StandardCharsets.UTF_8);
        String err = Files.readString(tmp.resolve("err"), StandardCharsets.UTF_8);
        String name = Paths.get(script).getFileName().toString();
        boolean usage = out.lines().anyMatch(l -> l.matches("^[#\\s]*[Uu]sage: \\S*" + name
            + "\\b.*"));
        if (p.exitValue() != 0 || !usage) {
          failures.add(what + ": exit " + p.exitValue() + (usage ? "" : ", no usage line")
              + "; stdout: " + head(out) + "; stderr: " + head(err));
        }
        if (Files.exists(calls)) {
          failures.add(what + " called " + Files.readAllLines(calls));
          Files.delete(calls);
        }
      }
    }
    for (Path d : List.of(home, cwd, scratch)) {
      try (Stream<Path> s = Files.list(d)) {
        List<String> left = s.map(Path::toString).collect(Collectors.toList());
        if (!left.isEmpty()) {
          failures.add("files created: " + left);
        }
      }
    }
    Map<String, Long> after = snapshot();
    if (!after.equals(before)) {
      List<String> changed = new ArrayList<>();
      after.forEach((k, v) -> {
        if (!v.equals(before.get(k))) {
          changed.add(k);
        }
      });
      before.keySet().stream().filter(k -> !after.containsKey(k)).forEach(changed::add);
      failures.add("repository files created, changed or removed: " + changed);
    }
    assertEquals(List.of(), failures);
  }

  /** The repository's files and folders (not .git, not this module's build output). */
  private static Map<String, Long> snapshot() throws IOException {
    Path own = ROOT.resolve("shuffle-rdma/target");
    Map<String, Long> m = new TreeMap<>();
    try (Stream<Path> s = Files.walk(ROOT)) {
      s.filter(p -> !p.startsWith(ROOT.resolve(".git")) && !p.startsWith(own))
          .forEach(p -> {
            try {
              m.put(ROOT.relativize(p).toString(), Files.isDirectory(p) ? -1L
                  : Files.getLastModifiedTime(p).toMillis() * 31 + Files.size(p));
            } catch (IOException e) {
              m.put(ROOT.relativize(p).toString(), -2L);
            }
          });
    }
    return m;
  }

  private static String head(String s) {
    String t = s.strip().replace('\n', '|');
    return t.length() > 300 ? t.substring(0, 300) + "..." : t;
  }
}
