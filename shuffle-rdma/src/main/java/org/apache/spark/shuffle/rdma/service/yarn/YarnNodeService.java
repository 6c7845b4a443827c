/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service.yarn;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.service.NodeService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node service on YARN: a NodeManager auxiliary service that runs the node service
 * (docs/node-service.md) as a child process of the NodeManager, from the NodeManager's start to
 * its stop, and releases each application's outputs in it as soon as YARN ends the
 * application on this node ({@link #stopApplication}: RELEASE_APP over the socket), instead of
 * one lease later.
 *
 * <p>Why a child process and not the node service inside the NodeManager's JVM: the service
 * maps and (with verbs) pins map outputs and loads JNI libraries (libfdpass, later libdisni);
 * a crash or a leak there must not take the NodeManager down, its memory must not count
 * against the NodeManager's heap, and it needs Spark's jars, which the NodeManager's class path
 * does not have. As a child it is the same process, command line and log as in every other
 * deployment (bin/shuffle-rdma-service, systemd, Kubernetes).
 *
 * <p>This class runs inside the NodeManager, whose class path has Hadoop but no Spark: it
 * uses the JDK, Hadoop's API and the plugin's hand-over client (handover, fdpass), none of
 * which loads a Spark or Scala class. Settings: {@link YarnServiceKeys}.
 */
public class YarnNodeService extends AuxiliaryService {
  /** The name docs/node-service.md configures it under (yarn.nodemanager.aux-services). */
  public static final String NAME = "spark_shuffle_rdma";
  /** The service's main class and Spark's JVM options printer, by name: no class load here. */
  static final String MAIN_CLASS = "org.apache.spark.shuffle.rdma.service.NodeService";
  static final String JVM_OPTIONS_CLASS = "org.apache.spark.shuffle.rdma.service.JvmOptions";
  /** Each RELEASE_APP waits at most this long for the service's answer. */
  private static final int RELEASE_TIMEOUT_MS = 60_000;
  private static final Logger LOG = LoggerFactory.getLogger(YarnNodeService.class);

  private Path socket;
  private List<String> command;
  private long startTimeoutMs;
  private long stopTimeoutMs;
  private volatile Process process;
  /** The releases, one at a time, off the NodeManager's dispatcher thread. */
  private ExecutorService releases;

  public YarnNodeService() {
    super(NAME);
  }

  @Override
  protected void serviceInit(Configuration conf) throws Exception {
    String s = conf.getTrimmed(YarnServiceKeys.SOCKET, "");
    if (s.isEmpty() || !s.startsWith("/")) {
      throw new IllegalArgumentException(YarnServiceKeys.SOCKET + " must be set to an "
          + "absolute path (the node service's Unix socket, the same as the applications' "
          + "spark.shuffle.rdma.service.socket), not '" + s + "'");
    }
    socket = Paths.get(s);
    startTimeoutMs = conf.getTimeDuration(YarnServiceKeys.START_TIMEOUT,
        YarnServiceKeys.START_TIMEOUT_DEFAULT_MS, TimeUnit.MILLISECONDS);
    stopTimeoutMs = conf.getTimeDuration(YarnServiceKeys.STOP_TIMEOUT,
        YarnServiceKeys.STOP_TIMEOUT_DEFAULT_MS, TimeUnit.MILLISECONDS);
    String javaHome = conf.getTrimmed(YarnServiceKeys.JAVA_HOME, "");
    String plugin = pluginJar(conf.getTrimmed(YarnServiceKeys.JAR, ""));
    checkJava(javaHome, plugin);
    String java = javaExecutable(javaHome);
    String classPath = classPath(plugin, conf.getTrimmed(YarnServiceKeys.SPARK_HOME, ""));
    command = new ArrayList<>();
    command.add(java);
    command.addAll(words(jvmOptions(java, classPath)));
    command.addAll(words(conf.getTrimmed(YarnServiceKeys.JAVA_OPTS, "")));
    command.add("-cp");
    command.add(classPath);
    command.add(MAIN_CLASS);
    command.add("--socket");
    command.add(socket.toString());
    command.addAll(words(conf.getTrimmed(YarnServiceKeys.ARGS, "")));
    super.serviceInit(conf);
  }

  /** The node service's command line (after serviceInit). */
  List<String> command() {
    return command;
  }

  /** The node service's process, or null before serviceStart and after serviceStop. */
  Process process() {
    return process;
  }

  @Override
  protected void serviceStart() throws Exception {
    releases = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "shuffle-rdma-service-release");
      t.setDaemon(true);
      return t;
    });
    LOG.info("starting the node service: {}", String.join(" ", command));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    LinkedBlockingQueue<String> early = new LinkedBlockingQueue<>();
    Thread pump = new Thread(() -> pump(p, early), "shuffle-rdma-service-log");
    pump.setDaemon(true);
    pump.start();
    Deque<String> last = new ArrayDeque<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startTimeoutMs);
    while (true) {
      String line = early.poll(100, TimeUnit.MILLISECONDS);
      if (line != null) {
        if (line.startsWith(NodeService.READY)) {
          break;
        }
        last.addLast(line);
        if (last.size() > 20) {
          last.removeFirst();
        }
      } else if (!p.isAlive() && !pump.isAlive() && early.isEmpty()) {
        throw new IOException("the node service exited with status " + p.exitValue()
            + " before it was ready: " + String.join(" | ", last));
      } else if (System.nanoTime() > deadline) {
        stop(p);
        throw new IOException("the node service was not ready within " + startTimeoutMs
            + " ms (" + YarnServiceKeys.START_TIMEOUT + "): " + String.join(" | ", last));
      }
    }
    process = p;
    LOG.info("the node service is ready (pid {}) at {}", p.pid(), socket);
    p.onExit().thenAccept(done -> {
      if (process == done) {
        LOG.error("the node service (pid {}) exited with status {}: executors on this node "
            + "hand nothing over (they serve their outputs themselves) until the NodeManager "
            + "restarts", done.pid(), done.exitValue());
      }
    });
    super.serviceStart();
  }

  /**
   * Copies the service's output to the NodeManager's log, one line each; until the ready
   * line, also to {@code early} for serviceStart.
   */
  private static void pump(Process p, LinkedBlockingQueue<String> early) {
    boolean ready = false;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        LOG.info("[shuffle-rdma-service] {}", line);
        if (!ready) {
          early.add(line);
          ready = line.startsWith(NodeService.READY);
        }
      }
    } catch (IOException e) {
      // the process ended
    }
  }

  @Override
  protected void serviceStop() throws Exception {
    if (releases != null) {
      releases.shutdown();
      releases.awaitTermination(RELEASE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }
    Process p = process;
    process = null;
    if (p != null) {
      stop(p);
    }
    super.serviceStop();
  }

  /**
   * SIGTERM (the service stops serving, removes its socket and keeps its state directory for
   * its next start), SIGKILL if stuck.
   */
  private void stop(Process p) throws InterruptedException {
    LOG.info("stopping the node service (pid {}): SIGTERM", p.pid());
    p.destroy();
    if (!p.waitFor(stopTimeoutMs, TimeUnit.MILLISECONDS)) {
      LOG.warn("the node service (pid {}) did not stop within {} ms of SIGTERM ({}): killed",
          p.pid(), stopTimeoutMs, YarnServiceKeys.STOP_TIMEOUT);
      p.destroyForcibly();
      p.waitFor(stopTimeoutMs, TimeUnit.MILLISECONDS);
    } else {
      LOG.info("the node service (pid {}) stopped, exit status {}", p.pid(), p.exitValue());
    }
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext context) {
    // Nothing: executors hand their outputs over through the socket themselves.
  }

  /**
   * YARN ended the application on this node: RELEASE_APP for its id (Spark's application id
   * on YARN is the YARN application id), on a thread of its own so that the NodeManager's
   * dispatcher does not wait for the release. A service that holds nothing of the application
   * releases 0. An application with spark.authenticate is released too although this side
   * does not hold its secret: the service takes RELEASE_APP from its parent process, which
   * the NodeManager is (the kernel names the peer's pid, SO_PEERCRED).
   */
  @Override
  public void stopApplication(ApplicationTerminationContext context) {
    String appId = context.getApplicationId().toString();
    ExecutorService r = releases;
    if (r == null || r.isShutdown()) {
      return;
    }
    r.execute(() -> release(appId));
  }

  private void release(String appId) {
    try (HandOverClient c = HandOverClient.connect(socket, RELEASE_TIMEOUT_MS)) {
      HandOverAnswer a = c.releaseApp(appId);
      if (a.isRefused()) {
        LOG.warn("the node service refused to release application {} at its end: {}",
            appId, a.refusal());
      } else {
        LOG.info("released application {} at its end (YARN stopApplication): {} outputs, "
            + "{} bytes", appId, a.releasedOutputs(), a.releasedBytes());
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      // LinkageError: libfdpass could not be loaded in this JVM.
      LOG.warn("could not release application {} in the node service at {}: {}", appId,
          socket, e.toString());
    }
  }

  @Override
  public ByteBuffer getMetaData() {
    return ByteBuffer.allocate(0);
  }

  /**
   * The Java that runs the service ({@link YarnServiceKeys#JAVA_HOME}, else the NodeManager's)
   * must run the plugin jar's class files (Java 17 for the Spark 4 lines, 11 for 3.5): else
   * the NodeManager's start fails here naming both and the fix.
   */
  private static void checkJava(String javaHome, String plugin) throws IOException {
    Path home = Paths.get(javaHome.isEmpty() ? System.getProperty("java.home") : javaHome);
    Path jar = Paths.get(plugin);
    String problem = JavaLevel.check(JavaLevel.of(home), JavaLevel.needed(jar), home,
        !javaHome.isEmpty(), jar);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }

  private static String javaExecutable(String javaHome) {
    String home = javaHome.isEmpty() ? System.getProperty("java.home") : javaHome;
    return Paths.get(home, "bin", "java").toString();
  }

  /** The plugin jar (or classes directory): the key, else where this class was loaded from. */
  private static String pluginJar(String jar) {
    String plugin = jar;
    if (plugin.isEmpty()) {
      try {
        plugin = Paths.get(YarnNodeService.class.getProtectionDomain().getCodeSource()
            .getLocation().toURI()).toString();
      } catch (java.net.URISyntaxException | RuntimeException e) {
        throw new IllegalArgumentException("cannot tell where the plugin jar is: set "
            + YarnServiceKeys.JAR, e);
      }
    }
    if (!Files.exists(Paths.get(plugin))) {
      throw new IllegalArgumentException("the plugin jar " + plugin + " does not exist ("
          + YarnServiceKeys.JAR + ")");
    }
    return plugin;
  }

  /** The plugin jar and SPARK_HOME's jars, as bin/shuffle-rdma-service builds it. */
  private static String classPath(String plugin, String sparkHome) {
    String home = sparkHome.isEmpty() ? System.getenv().getOrDefault("SPARK_HOME", "")
        : sparkHome;
    if (home.isEmpty() || !Files.isDirectory(Paths.get(home, "jars"))) {
      throw new IllegalArgumentException("the node service needs Spark's jars: set "
          + YarnServiceKeys.SPARK_HOME + " (or the NodeManager's SPARK_HOME) to the Spark "
          + "installation the executors of this node run, not '" + home + "'");
    }
    return plugin + File.pathSeparator + Paths.get(home, "jars") + File.separator + "*";
  }

  /** Spark's own module openings (its launcher's list), as bin/shuffle-rdma-service asks. */
  private static String jvmOptions(String java, String classPath) throws IOException,
      InterruptedException {
    Process p = new ProcessBuilder(java, "-cp", classPath, JVM_OPTIONS_CLASS)
        .redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException("could not read Spark's JVM options with " + java + " -cp "
          + classPath + ": " + new String(out, StandardCharsets.UTF_8).trim());
    }
    return new String(out, StandardCharsets.UTF_8).trim();
  }

  private static List<String> words(String s) {
    return s.isEmpty() ? List.of() : Arrays.asList(s.trim().split("\\s+"));
  }
}
