/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Collections;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import scala.Tuple3;
import scala.Tuple4;
import scala.reflect.ClassTag$;

import org.apache.spark.SecurityManager;
import org.apache.spark.SecurityManager$;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcEnv$;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A hostile executor on the metadata plane (docs/security.md): the real driver endpoints on
 * a real Spark RpcEnv (server mode, loopback), and two executors on client-mode RpcEnvs of
 * their own, each with its own connection, as Spark's executors have: "1", the victim, and
 * "2", an impostor that sends messages on 1's behalf. The impostor's messages are refused
 * and counted; 1's own traffic keeps working.
 */
class MetadataImpostorTest {
  private static final int SHUFFLE = 5;
  private static final int PARTITIONS = 8;

  private RpcEnv driver;
  private RpcEnv victimEnv;
  private RpcEnv impostorEnv;
  private RdmaMasterEndpoint master;
  private RpcEndpointRef victim;
  private RpcEndpointRef victimTables;
  private RpcEndpointRef victimStats;
  private RpcEndpointRef impostor;
  private final LinkedBlockingQueue<Long> victimReleases = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() {
    SparkConf conf = new SparkConf(false).set("spark.rpc.askTimeout", "30s");
    SecurityManager security = new SecurityManager(conf,
        SecurityManager$.MODULE$.$lessinit$greater$default$2(),
        SecurityManager$.MODULE$.$lessinit$greater$default$3());
    driver = RpcEnv$.MODULE$.create("impostor-driver", "127.0.0.1", 0, conf, security, false);
    master = new RdmaMasterEndpoint(driver);
    driver.setupEndpoint(RdmaMasterEndpoint.NAME(), master);
    driver.setupEndpoint(RdmaTableEndpoint.NAME(), new RdmaTableEndpoint(driver, master, null));
    master.shuffleRegistered(SHUFFLE, PARTITIONS);

    victimEnv = RpcEnv$.MODULE$.create("victim", "127.0.0.1", 0, conf, security, true);
    victim = victimEnv.setupEndpointRef(driver.address(), RdmaMasterEndpoint.NAME());
    victimTables = victimEnv.setupEndpointRef(driver.address(), RdmaTableEndpoint.NAME());
    victimStats = victimEnv.setupEndpoint("rdma-shuffle-executor-1",
        new RdmaExecutorEndpoint(victimEnv, Collections::emptyMap,
            (shuffle, map) -> victimReleases.add(map)));
    MetadataRpc.registerTransport(victim, "1", "tcp", new PeerAddress("10.0.0.1", 4001),
        victimStats);

    impostorEnv = RpcEnv$.MODULE$.create("impostor", "127.0.0.1", 0, conf, security, true);
    impostor = impostorEnv.setupEndpointRef(driver.address(), RdmaMasterEndpoint.NAME());
    MetadataRpc.registerTransport(impostor, "2", "tcp", new PeerAddress("10.0.0.2", 4002),
        impostorEnv.setupEndpoint("rdma-shuffle-executor-2",
            new RdmaExecutorEndpoint(impostorEnv, Collections::emptyMap, (s, m) -> { })));
  }

  @AfterEach
  void stop() {
    for (RpcEnv e : new RpcEnv[] {impostorEnv, victimEnv, driver}) {
      if (e != null) {
        e.shutdown();
        e.awaitTermination();
      }
    }
  }

  private static MapOutputDescriptor output(long mapId, String executorId, int partitions) {
    return new MapOutputDescriptor(SHUFFLE, mapId, executorId, partitions, 0x7f0000000000L,
        0x1234, 100, 1L << 30, new long[] {0x7e0000000000L}, new int[] {0x5678});
  }

  /** The refusal the asker sees: Spark wraps the driver's exception; find its kind. */
  private static <T extends Throwable> T refused(Class<T> kind, Executable ask) {
    Throwable t = assertThrows(Throwable.class, ask);
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (kind.isInstance(c)) {
        return kind.cast(c);
      }
    }
    fail("expected a " + kind.getSimpleName() + " in the chain of " + t, t);
    return null;
  }

  private ShuffleTableCache.Location locate(long mapId, String executorId) {
    return new ShuffleTableCache(victim, victimTables).locateOrNull(SHUFFLE, mapId, executorId);
  }

  @Test
  void impostorCannotRedirectAnotherExecutorsTransport() {
    SecurityException e = refused(SecurityException.class, () -> MetadataRpc.registerTransport(
        impostor, "1", "tcp", new PeerAddress("10.6.6.6", 6666), victimStats));
    assertTrue(e.getMessage().contains("executor 1 is bound to sender"), e.getMessage());
    assertEquals(1, master.guard().refusals());
    // 1's output still resolves to 1's own address.
    MetadataRpc.publish(victim, SHUFFLE, 10, DescriptorCodec.encodeEntry(output(10, "1", 8)));
    assertEquals(new PeerAddress("10.0.0.1", 4001), locate(10, "1").peer);
    // 1 itself may register again (a restarted transport), from its own connection.
    MetadataRpc.registerTransport(victim, "1", "tcp", new PeerAddress("10.0.0.1", 4011),
        victimStats);
    assertEquals(new PeerAddress("10.0.0.1", 4011), locate(10, "1").peer);
    assertEquals(1, master.guard().refusals());
  }

  @Test
  void impostorCannotPublishAnotherExecutorsOutputs() {
    SecurityException e = refused(SecurityException.class, () -> MetadataRpc.publish(impostor,
        SHUFFLE, 20, DescriptorCodec.encodeEntry(output(20, "1", 8))));
    assertTrue(e.getMessage().contains("executor 1 is bound to sender"), e.getMessage());
    // An executor id nobody registered is refused as well.
    refused(SecurityException.class, () -> MetadataRpc.publish(impostor, SHUFFLE, 21,
        DescriptorCodec.encodeEntry(output(21, "9", 8))));
    assertEquals(2, master.guard().refusals());
    assertNull(locate(20, "1"));
    assertNull(locate(21, "9"));
    // Each executor's own outputs are published.
    MetadataRpc.publish(victim, SHUFFLE, 22, DescriptorCodec.encodeEntry(output(22, "1", 8)));
    MetadataRpc.publish(impostor, SHUFFLE, 23, DescriptorCodec.encodeEntry(output(23, "2", 8)));
    assertNotNull(locate(22, "1"));
    assertEquals(new PeerAddress("10.0.0.2", 4002), locate(23, "2").peer);
  }

  @Test
  void impostorCannotRevokeAnotherExecutorsOutputs() throws Exception {
    MetadataRpc.publish(victim, SHUFFLE, 30, DescriptorCodec.encodeEntry(output(30, "1", 8)));
    // What the driver's listener used to send as messages: release an attempt's output on
    // its executor, forget a shuffle's table; and the listing of executors' endpoints.
    impostor.send(new Tuple4<>("rdma-shuffle.releaseUncommitted", SHUFFLE, 30L, "1"));
    SecurityException e = refused(SecurityException.class, () -> impostor.askSync(
        new Tuple3<>("rdma-shuffle.releaseUncommitted", SHUFFLE, 30L),
        ClassTag$.MODULE$.apply(Object.class)));
    assertTrue(e.getMessage().contains("only the driver sends it"), e.getMessage());
    refused(SecurityException.class, () -> impostor.askSync(
        new scala.Tuple2<>("rdma-shuffle.forget", SHUFFLE),
        ClassTag$.MODULE$.apply(Object.class)));
    refused(SecurityException.class, () -> impostor.askSync(
        "rdma-shuffle.getExecutorEndpoints", ClassTag$.MODULE$.apply(Object.class)));
    assertEquals(4, master.guard().refusals()); // the one-way send is counted too
    assertNull(victimReleases.poll(200, TimeUnit.MILLISECONDS));
    assertNotNull(locate(30, "1"));
    // The driver itself releases it: the table forgets it and executor 1 is told.
    master.releaseUncommitted(SHUFFLE, 30, "1");
    assertEquals(30L, victimReleases.poll(10, TimeUnit.SECONDS));
    assertNull(locate(30, "1"));
  }

  @Test
  void partitionCountBeyondTheShufflesIsRefused() {
    // 2^27 partitions: every reader of this output would allocate 1 GiB for its index.
    IllegalArgumentException e = refused(IllegalArgumentException.class,
        () -> MetadataRpc.publish(victim, SHUFFLE, 40,
            DescriptorCodec.encodeEntry(output(40, "1", 1 << 27))));
    assertTrue(e.getMessage().contains("shuffle 5 has 8 partitions"), e.getMessage());
    refused(IllegalArgumentException.class, () -> MetadataRpc.publish(victim, SHUFFLE, 41,
        DescriptorCodec.encodeEntry(output(41, "1", 7))));
    // A shuffle the driver did not register (or forgot) takes nothing.
    MapOutputDescriptor other = new MapOutputDescriptor(SHUFFLE + 1, 42, "1", 8, 0, 1, 0,
        1L << 30, new long[0], new int[0]);
    e = refused(IllegalArgumentException.class, () -> MetadataRpc.publish(victim, SHUFFLE + 1,
        42, DescriptorCodec.encodeEntry(other)));
    assertTrue(e.getMessage().contains("is not registered on the driver"), e.getMessage());
    assertEquals(3, master.guard().refusals());
    assertNull(locate(40, "1"));
    assertNull(locate(41, "1"));
    MetadataRpc.publish(victim, SHUFFLE, 43, DescriptorCodec.encodeEntry(output(43, "1", 8)));
    assertEquals(8, locate(43, "1").descriptor.numPartitions());
    master.forget(SHUFFLE);
    refused(IllegalArgumentException.class, () -> MetadataRpc.publish(victim, SHUFFLE, 44,
        DescriptorCodec.encodeEntry(output(44, "1", 8))));
  }
}
