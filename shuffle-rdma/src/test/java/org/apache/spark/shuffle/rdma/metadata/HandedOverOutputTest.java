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


import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Outputs an executor handed to its node service, on the real driver endpoints and
 * client-mode RpcEnvs: they resolve to the service's address for the blocks Spark lists on
 * the executor that handed them over, before and after Spark removed that executor, and for
 * no other executor; only that executor can publish them, naming a service it announced.
 */
class HandedOverOutputTest {
  private static final int SHUFFLE = 5;
  private static final int PARTITIONS = 3;
  private static final PeerAddress SERVICE = new PeerAddress("10.0.0.9", 7337);

  private RpcEnv driver;
  private RpcEnv env1;
  private RpcEnv env2;
  private MetadataFixture fixture;
  private RdmaMasterEndpoint master;
  private RpcEndpointRef master1;
  private RpcEndpointRef master2;
  private RpcEndpointRef stats2;

  @BeforeEach
  void start() {
    fixture = new MetadataFixture();
    fixture.registerShuffle(SHUFFLE, PARTITIONS);
    driver = fixture.driver;
    master = fixture.master;
    MetadataFixture.Executor e1 = fixture.addExecutor("1", new PeerAddress("10.0.0.1", 4001));
    MetadataFixture.Executor e2 = fixture.addExecutor("2", new PeerAddress("10.0.0.2", 4002));
    env1 = e1.env;
    master1 = e1.masterRef;
    env2 = e2.env;
    master2 = e2.masterRef;
    stats2 = e2.statsRef;

    // 1 hands map 10 to the service and keeps map 11 itself; 2 keeps map 20.
    MetadataRpc.registerNodeService(master1, "1", SERVICE);
    MetadataRpc.publishHandedOver(master1, SHUFFLE, 10, "1",
        DescriptorCodec.encodeEntry(output(10, NodeServiceId.of(SERVICE))));
    MetadataRpc.publish(master1, SHUFFLE, 11, DescriptorCodec.encodeEntry(output(11, "1")));
    MetadataRpc.publish(master2, SHUFFLE, 20, DescriptorCodec.encodeEntry(output(20, "2")));
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  private static MapOutputDescriptor output(long mapId, String executorId) {
    return MetadataFixture.sampleOutput(SHUFFLE, mapId, executorId, PARTITIONS);
  }

  private ShuffleTableCache reader() {
    return new ShuffleTableCache(master2,
        env2.setupEndpointRef(driver.address(), RdmaTableEndpoint.NAME()));
  }

  @Test
  void aHandedOverOutputResolvesToTheServiceForItsExecutorOnly() {
    ShuffleTableCache r = reader();
    ShuffleTableCache.Location at = r.locateOrNull(SHUFFLE, 10, "1");
    assertNotNull(at);
    assertEquals(SERVICE, at.peer);
    assertEquals("node-service@10.0.0.9:7337", at.descriptor.executorId());
    assertEquals(new PeerAddress("10.0.0.1", 4001), r.locateOrNull(SHUFFLE, 11, "1").peer);
    // Spark never lists 1's map id on 2 (nor on the service's name): no resolution there.
    assertNull(r.locateOrNull(SHUFFLE, 10, "2"));
  }

  @Test
  void itStillResolvesAfterItsExecutorIsRemoved() {
    ShuffleTableCache stale = reader();
    assertNotNull(stale.locateOrNull(SHUFFLE, 10, "1"));
    master.executorRemoved("1");
    // A reader that starts after the removal: the service's output resolves, 1's own not.
    ShuffleTableCache fresh = reader();
    assertEquals(SERVICE, fresh.locateOrNull(SHUFFLE, 10, "1").peer);
    assertNull(fresh.locateOrNull(SHUFFLE, 11, "1"));
    assertTrue(fresh.removed("1"));
    assertEquals(SERVICE, fresh.locateOrNull(SHUFFLE, 10, "1").peer, "also once 1 is known gone");
    // A reader whose directory predates the removal learns it, and keeps the service's.
    assertTrue(stale.departed(SHUFFLE, "1"));
    assertEquals(SERVICE, stale.locateOrNull(SHUFFLE, 10, "1").peer);
    assertNull(stale.locateOrNull(SHUFFLE, 11, "1"));
  }

  @Test
  void onlyItsExecutorPublishesItAndOnlyNamingAnAnnouncedService() {
    // 2 cannot publish an output as handed over by 1 ...
    Throwable e = assertThrows(Throwable.class, () -> MetadataRpc.publishHandedOver(master2,
        SHUFFLE, 21, "1", DescriptorCodec.encodeEntry(output(21, NodeServiceId.of(SERVICE)))));
    assertTrue(chain(e).contains("is bound to sender"), chain(e));
    // ... nor name a service nobody announced, nor an executor as the server ...
    PeerAddress elsewhere = new PeerAddress("10.6.6.6", 6666);
    e = assertThrows(Throwable.class, () -> MetadataRpc.publishHandedOver(master2, SHUFFLE, 22,
        "2", DescriptorCodec.encodeEntry(output(22, NodeServiceId.of(elsewhere)))));
    assertTrue(chain(e).contains("is not a node service announced to the driver"), chain(e));
    e = assertThrows(Throwable.class, () -> MetadataRpc.publishHandedOver(master2, SHUFFLE, 23,
        "2", DescriptorCodec.encodeEntry(output(23, "1"))));
    assertTrue(chain(e).contains("is not a node service announced to the driver"), chain(e));
    // ... nor publish a service's output as its own, nor register a transport under its name.
    e = assertThrows(Throwable.class, () -> MetadataRpc.publish(master2, SHUFFLE, 24,
        DescriptorCodec.encodeEntry(output(24, NodeServiceId.of(SERVICE)))));
    assertTrue(chain(e).contains("has not registered its transport"), chain(e));
    e = assertThrows(Throwable.class, () -> MetadataRpc.registerTransport(master2,
        NodeServiceId.of(elsewhere), "tcp", elsewhere, stats2));
    assertTrue(chain(e).contains("is a node service name"), chain(e));
    // A removed executor publishes nothing more, handed over or not.
    master.executorRemoved("1");
    e = assertThrows(Throwable.class, () -> MetadataRpc.publishHandedOver(master1, SHUFFLE, 12,
        "1", DescriptorCodec.encodeEntry(output(12, NodeServiceId.of(SERVICE)))));
    assertTrue(chain(e).contains("executor 1 was removed"), chain(e));
    assertEquals(6, master.guard().refusals());
    ShuffleTableCache r = reader();
    for (long map : new long[] {21, 22, 23, 24, 12}) {
      assertNull(r.locateOrNull(SHUFFLE, map, "1"));
      assertNull(r.locateOrNull(SHUFFLE, map, "2"));
    }
  }

  private static String chain(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c).append(" <- ");
    }
    return b.toString();
  }
}
