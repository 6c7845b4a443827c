/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.TransportFactory;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.handover.ExecutorHandOver;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverClient;
import org.apache.spark.shuffle.rdma.handover.ServiceStats;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;

/**
 * Two applications with spark.authenticate on one node service, on whatever transport the
 * service runs (verbs in the Soft-RoCE run): each hands one map output over with its own
 * secret, as its executors would; then, from this JVM as a reader of each application:
 * <ul>
 *   <li>A's reader (A's secret) reads A's bytes exactly; B's reader reads B's;</li>
 *   <li>B's address and key copied into a READ on A's connection fail (verbs: the key names
 *       no region in A's protection domain, IBV_WC_REM_ACCESS_ERR), and A's reader still
 *       reads after that on a new connection;</li>
 *   <li>A's secret at B's transport, and no secret at A's, are refused at connect (verbs:
 *       RDMA_CM_EVENT_REJECTED, the HMAC in the private data does not match) and read
 *       nothing;</li>
 *   <li>releasing both applications leaves the service as it found them.</li>
 * </ul>
 * Runs after {@link NodeServiceRun} in {@link TwoHostVerbsRun}'s driver (no JVM to start), or
 * alone: {@code ServiceIsolationRun <socket> <host>}, exit status 0 only if every check
 * passed.
 */
final class ServiceIsolationRun {
  private static final int PARTITIONS = 4;
  private static final int PARTITION_BYTES = 4096;
  private static final int TIMEOUT_S = 120;

  private ServiceIsolationRun() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ServiceIsolationRun <service socket> <this host's address>");
      System.exit(2);
    }
    Checks checks = new Checks();
    run(Path.of(args[0]), args[1], checks, System.nanoTime());
    System.out.println(checks.allPassed() ? "ServiceIsolationRun: PASS"
        : "ServiceIsolationRun: FAILED " + checks.failed());
    System.exit(checks.allPassed() ? 0 : 1);
  }

  /** One application: its id, secret, handed-over output and the bytes in it. */
  private static final class App {
    final String id;
    final String secret;
    final byte[] data;
    final ExecutorHandOver handOver;
    HandOverAnswer answer;

    App(String id, String secret, byte seed, Path socket) {
      this.id = id;
      this.secret = secret;
      this.data = new byte[PARTITIONS * PARTITION_BYTES];
      for (int i = 0; i < data.length; i++) {
        data[i] = (byte) (seed + i * 31 + (i >>> 9));
      }
      this.handOver = new ExecutorHandOver(socket, id, 60_000, null, 0, secret, 0);
    }

    long address(int offset) {
      return answer.descriptor().dataAddress(0) + offset;
    }

    int key() {
      return answer.descriptor().dataKey(0);
    }
  }

  static void run(Path socket, String host, Checks checks, long t0) throws Exception {
    checks.scope("isolation");
    ServiceStats before = stats(socket);
    long stamp = System.currentTimeMillis();
    // Not "app-...": two-host-test.sh reads the service log's release line of the Spark
    // application by that prefix.
    App a = new App("isolation-a-" + stamp, "secret-a-" + Long.toHexString(System.nanoTime()),
        (byte) 17, socket);
    App b = new App("isolation-b-" + stamp, "secret-b-" + Long.toHexString(System.nanoTime()),
        (byte) 101, socket);
    Path dir = Files.createTempDirectory("service-isolation");
    try {
      for (App app : new App[] {a, b}) {
        app.answer = handOver(app, dir);
        if (!checks.check("hand-over of " + app.id + " with its secret", app.answer != null,
            app.answer != null ? app.answer.transport() + " " + app.answer.address()
                : String.valueOf(app.handOver.lastProblem()))) {
          return;
        }
      }
      String kind = a.answer.transport();
      boolean verbs = kind.equals("verbs");
      progress(t0, "two applications with spark.authenticate on the service: " + a.id + " at "
          + a.answer.address() + ", " + b.id + " at " + b.answer.address() + " (" + kind + ")");
      checks.check("each application on a transport of its own",
          !a.answer.address().equals(b.answer.address()), a.answer.address() + " vs "
              + b.answer.address());
      try (ShuffleTransport readerA = reader(kind, host, a.id, a.secret);
           ShuffleTransport readerB = reader(kind, host, b.id, b.secret);
           ShuffleTransport noSecret = reader(kind, host, a.id, null)) {
        // A reads its own bytes, B its own.
        String own = readProblem(readerA, a, PARTITION_BYTES, PARTITION_BYTES);
        checks.check("A's reader reads A's output", own == null, own == null
            ? "partition 1, " + PARTITION_BYTES + " bytes" : own);
        own = readProblem(readerB, b, 0, 2 * PARTITION_BYTES);
        checks.check("B's reader reads B's output", own == null, own == null
            ? "partitions 0-1" : own);
        // B's address and key, copied into a READ on A's connection.
        String copied = readFails(readerA, a.answer.address(), b.address(0), b.key(),
            PARTITION_BYTES);
        checks.check("B's key on A's connection is refused", copied != null
            && (!verbs || copied.contains("IBV_WC_REM_ACCESS_ERR")),
            copied == null ? "the READ returned B's bytes" : copied);
        own = readProblem(readerA, a, 0, PARTITIONS * PARTITION_BYTES);
        checks.check("A's reader reads again after the refused READ", own == null,
            own == null ? "whole output" : own);
        // Connections without the right secret.
        // Each with the right address and key: only the secret is wrong.
        String wrongSecret = readFails(readerA, b.answer.address(), b.address(0), b.key(),
            PARTITION_BYTES);
        checks.check("A's secret at B's transport is refused", wrongSecret != null
            && (!verbs || wrongSecret.contains("RDMA_CM_EVENT_REJECTED")),
            wrongSecret == null ? "connected" : wrongSecret);
        String none = readFails(noSecret, a.answer.address(), a.address(0), a.key(),
            PARTITION_BYTES);
        checks.check("no secret at A's transport is refused", none != null
            && (!verbs || none.contains("RDMA_CM_EVENT_REJECTED")),
            none == null ? "connected" : none);
        long leaked = noSecret.stats().bytesRead.get();
        checks.check("the refused readers read nothing", leaked == 0,
            leaked + " bytes; A's reader " + readerA.stats().snapshot());
      }
    } finally {
      for (App app : new App[] {a, b}) {
        if (app.answer != null) {
          HandOverAnswer r = app.handOver.releaseApp();
          checks.check("release of " + app.id, r != null && r.releasedOutputs() == 1,
              r == null ? String.valueOf(app.handOver.lastProblem()) : r.toString());
        }
      }
      deleteTree(dir);
    }
    ServiceStats after = stats(socket);
    progress(t0, "service after the two applications: " + after);
    checks.check("the service is as before", after.applications() == before.applications()
        && after.outputs() == before.outputs()
        && after.registeredBytes() == before.registeredBytes()
        && after.openDescriptors() == before.openDescriptors(),
        "before " + before + ", after " + after);
    checks.scope("");
  }

  /** Writes one committed output (data and Spark's index) and hands it over. */
  private static HandOverAnswer handOver(App app, Path dir) throws IOException {
    Path data = dir.resolve(app.id + ".data");
    Path index = dir.resolve(app.id + ".index");
    Files.write(data, app.data);
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(index))) {
      for (int p = 0; p <= PARTITIONS; p++) {
        out.writeLong((long) p * PARTITION_BYTES);
      }
    }
    return app.handOver.handOver(0, 0, data.toFile(), index.toFile(), null,
        ChecksumAlgorithm.NONE);
  }

  /** A reader of application {@code appId}; with {@code secret} it authenticates. */
  private static ShuffleTransport reader(String kind, String host, String appId, String secret)
      throws IOException {
    SparkConf conf = new SparkConf(false)
        .set(RdmaConf.TRANSPORT().key(), kind)
        .set(RdmaConf.PORT().key(), "0")
        .set(RdmaConf.READ_TIMEOUT().key(), "30s")
        .set(RdmaConf.VERBS_RECEIVE_POOL_SIZE().key(), "4m")
        .set("spark.app.id", appId);
    if (kind.equals("verbs")) {
      conf.set(RdmaConf.BIND_ADDRESS().key(), host);
      String device = System.getProperty(RdmaConf.DEVICE().key());
      if (device != null && !device.isEmpty()) {
        conf.set(RdmaConf.DEVICE().key(), device);
      }
    }
    org.apache.spark.SecurityManager security = null;
    if (secret != null) {
      org.apache.spark.internal.config.package$ spark =
          org.apache.spark.internal.config.package$.MODULE$;
      conf.set(spark.NETWORK_AUTH_ENABLED().key(), "true").set(spark.AUTH_SECRET().key(), secret);
      security = new org.apache.spark.SecurityManager(conf, scala.Option.empty(),
          spark.AUTH_SECRET_FILE());
    }
    return TransportFactory.create(new TransportSettings(new RdmaShuffleConf(conf), host,
        security, appId, 2));
  }

  /**
   * Reads [offset, offset + length) of {@code app}'s output: null when the bytes match, else
   * what went wrong.
   */
  private static String readProblem(ShuffleTransport t, App app, int offset, int length) {
    Outcome o = new Outcome();
    try {
      t.connect(app.answer.address()).read(List.of(new ReadRequest(app.address(offset),
          app.key(), length, o, null)));
      byte[] got = o.done.get(TIMEOUT_S, TimeUnit.SECONDS);
      return java.util.Arrays.equals(got, java.util.Arrays.copyOfRange(app.data, offset,
          offset + length)) ? null : "other bytes than the output's";
    } catch (ExecutionException e) {
      return String.valueOf(e.getCause());
    } catch (Exception e) {
      return String.valueOf(e);
    }
  }

  /** The failure of one READ, or null if it returned bytes. */
  private static String readFails(ShuffleTransport t, PeerAddress at, long address, int key,
      int length) throws Exception {
    Outcome o = new Outcome();
    try {
      t.connect(at).read(List.of(new ReadRequest(address, key, length, o, null)));
      o.done.get(TIMEOUT_S, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return String.valueOf(e.getCause());
    } catch (IOException | RuntimeException e) {
      // tcp: Spark's auth bootstrap fails the connect with a RuntimeException
      return String.valueOf(e);
    }
  }

  /** One read's bytes, copied while the buffer is valid. */
  private static final class Outcome implements ReadCallback {
    final CompletableFuture<byte[]> done = new CompletableFuture<>();

    @Override
    public void onSuccess(ReadRequest r, ManagedBuffer data) {
      try {
        ByteBuffer b = data.nioByteBuffer();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        done.complete(bytes);
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }

    @Override
    public void onFailure(ReadRequest r, Throwable cause) {
      done.completeExceptionally(cause);
    }
  }

  private static ServiceStats stats(Path socket) throws IOException {
    try (HandOverClient c = HandOverClient.connect(socket, 30_000)) {
      return c.stats();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.deleteIfExists(f);
      }
    }
    Files.deleteIfExists(dir);
  }

  private static void progress(long t0, String what) {
    System.out.println("== [" + (System.nanoTime() - t0) / 1_000_000_000L + "s] " + what);
  }
}
