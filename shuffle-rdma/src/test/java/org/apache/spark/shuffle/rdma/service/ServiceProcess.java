/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * The node service as its own process, started the way operators start it:
 * bin/shuffle-rdma-service, with SPARK_HOME pointing at a directory whose jars/ links every
 * jar of this test's class path, and SHUFFLE_RDMA_JAR at the plugin's compiled classes (those
 * of the Spark line under test).
 */
final class ServiceProcess implements AutoCloseable {
  final Process process;
  final PeerAddress address;
  final Path socket;
  final long pid;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private ServiceProcess(Process process, Path socket) throws Exception {
    this.process = process;
    this.socket = socket;
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(
          process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null;) {
          System.out.println("[service] " + line);
          lines.add(line);
        }
      } catch (IOException e) {
        // the process ended
      }
    }, "service-stdout");
    pump.setDaemon(true);
    pump.start();
    String ready = awaitLine(NodeService.READY, 90);
    String addr = field(ready, "address=");
    int colon = addr.lastIndexOf(':');
    this.address = new PeerAddress(addr.substring(0, colon),
        Integer.parseInt(addr.substring(colon + 1)));
    this.pid = Long.parseLong(field(ready, "pid="));
  }

  private static String field(String line, String name) {
    int at = line.indexOf(name) + name.length();
    int end = line.indexOf(' ', at);
    return line.substring(at, end < 0 ? line.length() : end);
  }

  /** Starts bin/shuffle-rdma-service with {@code args} after --socket. */
  static ServiceProcess start(Path work, Path socket, String... args) throws Exception {
    Path root = Paths.get(System.getProperty("project.root", "..")).toAbsolutePath().normalize();
    Path sparkHome = work.resolve("spark-home");
    Path jars = Files.createDirectories(sparkHome.resolve("jars"));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Paths.get(entry);
      if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
        Path link = jars.resolve(p.getFileName());
        if (!Files.exists(link)) {
          Files.createSymbolicLink(link, p.toAbsolutePath());
        }
      }
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(root.resolve("bin/shuffle-rdma-service").toString());
    cmd.add("--socket");
    cmd.add(socket.toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("SPARK_HOME", sparkHome.toString());
    // The plugin classes of the Spark line under test (each line builds into its own dir).
    pb.environment().put("SHUFFLE_RDMA_JAR", Paths.get(NodeService.class.getProtectionDomain()
        .getCodeSource().getLocation().toURI()).toString());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().put("SHUFFLE_RDMA_SERVICE_OPTS", "-Xmx256m");
    return new ServiceProcess(pb.start(), socket);
  }

  /** The next line of the service's output that contains {@code text}. */
  String awaitLine(String text, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      String line = lines.poll(100, TimeUnit.MILLISECONDS);
      if (line != null && line.contains(text)) {
        return line;
      }
      if (line == null && !process.isAlive() && lines.isEmpty()) {
        throw new AssertionError("the service exited (" + process.exitValue()
            + ") before printing '" + text + "'");
      }
    }
    throw new AssertionError("no '" + text + "' from the service within " + seconds + " s");
  }

  /** Resident memory of the service's JVM (VmRSS), in KiB. */
  long rssKib() throws IOException {
    for (String l : Files.readAllLines(Paths.get("/proc/" + pid + "/status"))) {
      if (l.startsWith("VmRSS:")) {
        return Long.parseLong(l.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  /** SIGKILL: no shutdown hook runs, as when a node service crashes. */
  void kill() throws InterruptedException {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy); // SIGTERM: a clean stop
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      kill();
    }
  }
}
