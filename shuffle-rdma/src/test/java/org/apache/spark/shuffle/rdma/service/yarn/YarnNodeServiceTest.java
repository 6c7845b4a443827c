/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.service.JvmOptions;
import org.apache.spark.shuffle.rdma.service.NodeService;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NodeManager auxiliary service without YARN: its life cycle as the NodeManager drives
 * it (init, start, stopApplication, stop) on the real node service child process. A start
 * waits for the service's ready line; stopApplication releases that application alone, also
 * one with spark.authenticate (the NodeManager is the service's parent, it holds no secret);
 * stop leaves no process and no socket. A service that cannot start fails serviceStart with
 * its own message. RdmaYarnSuite (integration-tests) runs it in a MiniYARNCluster under Spark.
 */
class YarnNodeServiceTest {
  @TempDir
  Path work;

  @Test
  void classNamesMatch() {
    assertEquals(NodeService.class.getName(), YarnNodeService.MAIN_CLASS);
    assertEquals(JvmOptions.class.getName(), YarnNodeService.JVM_OPTIONS_CLASS);
  }

  @Test
  void theSocketIsRequired() {
    YarnNodeService s = new YarnNodeService();
    Exception e = assertThrows(Exception.class, () -> s.init(new Configuration(false)));
    assertTrue(String.valueOf(e.getMessage()).contains(YarnServiceKeys.SOCKET), e.toString());
  }

  @Test
  void runsTheServiceAndReleasesAnApplicationAtItsEnd() throws Exception {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    Path socket = work.resolve("s.sock");
    YarnNodeService aux = new YarnNodeService();
    aux.init(conf(socket, "--transport tcp --host 127.0.0.1"));
    assertTrue(aux.command().contains("--add-opens=java.base/java.nio=ALL-UNNAMED"),
        "Spark's module openings: " + aux.command());
    aux.start();
    try {
      assertEquals(Service.STATE.STARTED, aux.getServiceState());
      assertTrue(aux.process().isAlive());
      ApplicationId a = ApplicationId.newInstance(1765000000000L, 1);
      ApplicationId b = ApplicationId.newInstance(1765000000000L, 2);
      ApplicationId authenticated = ApplicationId.newInstance(1765000000000L, 3);
      try (HandOverClient c = HandOverClient.connect(socket, 30_000);
           HandOverClient executorOfAuthenticated = HandOverClient.connect(socket, 30_000)) {
        handOver(c, a.toString(), 1);
        handOver(c, a.toString(), 2);
        handOver(c, b.toString(), 1);
        // An application with spark.authenticate, as its executor hands over: the secret
        // first. The NodeManager (here this JVM, the service's parent) never learns it.
        HandOverAnswer proof = executorOfAuthenticated.appAuth(authenticated.toString(),
            "secret-of-the-application-5c2e", 0);
        assertFalse(proof.isRefused(), String.valueOf(proof.refusal()));
        handOver(executorOfAuthenticated, authenticated.toString(), 1);
        assertEquals(4, c.stats().outputs());

        aux.stopApplication(new ApplicationTerminationContext(a));
        ServiceStats s = awaitOutputs(c, 2);
        assertEquals(2, s.applications(), s.toString());
        aux.stopApplication(new ApplicationTerminationContext(b));
        s = awaitOutputs(c, 1);
        // Released without its secret: the request comes from the service's parent process.
        aux.stopApplication(new ApplicationTerminationContext(authenticated));
        s = awaitOutputs(c, 0);
        assertEquals(0, s.applications(), s.toString());
        assertEquals(0, s.registeredBytes(), s.toString());
        assertEquals(0, s.openDescriptors(), s.toString());
      }
      assertEquals(0, aux.getMetaData().remaining());
    } finally {
      Process p = aux.process();
      aux.stop();
      assertNull(aux.process());
      assertFalse(p.isAlive(), "the service process is gone after serviceStop");
      assertFalse(Files.exists(socket), "the service removed its socket at SIGTERM");
    }
  }

  @Test
  void aServiceThatCannotStartFailsServiceStart() throws Exception {
    YarnNodeService aux = new YarnNodeService();
    aux.init(conf(work.resolve("s.sock"), "--transport nope"));
    Exception e = assertThrows(Exception.class, aux::start);
    assertTrue(String.valueOf(e.getMessage()).contains("--transport is tcp, verbs or auto"),
        e.toString());
    assertEquals(Service.STATE.STOPPED, aux.getServiceState());
  }

  private Configuration conf(Path socket, String args) throws Exception {
    Path jars = Files.createDirectories(work.resolve("spark-home/jars"));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Paths.get(entry);
      if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
        Path link = jars.resolve(p.getFileName());
        if (!Files.exists(link)) {
          Files.createSymbolicLink(link, p.toAbsolutePath());
        }
      }
    }
    Configuration conf = new Configuration(false);
    conf.set(YarnServiceKeys.SOCKET, socket.toString());
    conf.set(YarnServiceKeys.SPARK_HOME, work.resolve("spark-home").toString());
    conf.set(YarnServiceKeys.JAVA_OPTS, "-Xmx256m");
    conf.set(YarnServiceKeys.ARGS, args);
    conf.set(YarnServiceKeys.STOP_TIMEOUT, "30s");
    return conf;
  }

  private void handOver(HandOverClient c, String app, long mapId) throws Exception {
    Path dir = Files.createDirectories(work.resolve(app + "-" + mapId));
    Path data = Files.write(dir.resolve("shuffle_0_" + mapId + "_0.data"),
        TestFiles.randomBytes(300, mapId));
    Path index = TestFiles.writeIndex(dir.resolve("shuffle_0_" + mapId + "_0.index").toFile(),
        0, 100, 300).toPath();
    HandOverAnswer a = c.handOver(app, 0, mapId, 2, data, index, null, ChecksumAlgorithm.NONE);
    assertFalse(a.isRefused(), String.valueOf(a.refusal()));
  }

  private static ServiceStats awaitOutputs(HandOverClient c, int outputs) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    ServiceStats s = c.stats();
    while (s.outputs() != outputs && System.nanoTime() < deadline) {
      Thread.sleep(50);
      s = c.stats();
    }
    assertEquals(outputs, s.outputs(), s.toString());
    return s;
  }
}
