/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * An executor Spark removed (released by dynamic allocation, its outputs kept for an external
 * shuffle service): the real driver endpoints on a real RpcEnv, mapper executors "1" and "2"
 * on client-mode RpcEnvs of their own. Once the driver hears of 1's removal, readers resolve
 * none of 1's outputs (they fetch them through Spark's client), a reader whose directory
 * predates the removal learns it with one question, and nobody can register or publish as 1.
 */
class RemovedExecutorTest {
  private static final int SHUFFLE = 3;
  private static final int PARTITIONS = 4;

  private RpcEnv driver;
  private RpcEnv env1;
  private RpcEnv env2;
  private MetadataFixture fixture;
  private RdmaMasterEndpoint master;
  private RpcEndpointRef master1;
  private RpcEndpointRef tables1;
  private RpcEndpointRef stats1;
  private RpcEndpointRef master2;

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
    tables1 = e1.tablesRef;
    stats1 = e1.statsRef;
    env2 = e2.env;
    master2 = e2.masterRef;

    MetadataRpc.publish(master1, SHUFFLE, 10, DescriptorCodec.encodeEntry(output(10, "1")));
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

  /** A reader on executor 2's RpcEnv (any executor reads through the table endpoint). */
  private ShuffleTableCache reader() {
    return new ShuffleTableCache(master2,
        env2.setupEndpointRef(driver.address(), RdmaTableEndpoint.NAME()));
  }

  @Test
  void aRemovedExecutorsOutputsResolveToNothing() {
    master.executorRemoved("1");
    ShuffleTableCache fresh = reader();
    assertNull(fresh.locateOrNull(SHUFFLE, 10, "1"));
    assertEquals(new PeerAddress("10.0.0.2", 4002), fresh.locateOrNull(SHUFFLE, 20, "2").peer);
    assertTrue(fresh.removed("1"));
    assertFalse(fresh.removed("2"));
    assertFalse(master.executorEndpoints().contains("1"));
    // Every further output of 1, in any shuffle, is known gone without asking the driver.
    long fetches = fresh.tableFetches();
    assertNull(fresh.locateOrNull(SHUFFLE, 11, "1"));
    assertNull(fresh.locateOrNull(SHUFFLE + 1, 12, "1"));
    assertEquals(fetches, fresh.tableFetches());
  }

  @Test
  void aReaderWithAnOlderDirectoryLearnsOfTheRemovalWhenItsReadFails() {
    ShuffleTableCache stale = reader();
    assertNotNull(stale.locateOrNull(SHUFFLE, 10, "1"));
    master.executorRemoved("1");
    // Its copy still resolves 1's output: nothing told it (a read there fails, see below).
    assertNotNull(stale.locateOrNull(SHUFFLE, 10, "1"));
    assertFalse(stale.removed("1"));
    long fetches = stale.tableFetches();
    // After a failed read there the reader asks the driver once: 1 is gone, and known so.
    assertTrue(stale.departed(SHUFFLE, "1"));
    assertTrue(stale.departed(SHUFFLE, "1"));
    assertEquals(fetches + 1, stale.tableFetches());
    assertTrue(stale.removed("1"));
    // A failed read at a live executor is asked about too, and stays a failure.
    assertFalse(stale.departed(SHUFFLE, "2"));
    assertEquals(fetches + 2, stale.tableFetches());
    assertNull(stale.locateOrNull(SHUFFLE, 10, "1"));
    assertNotNull(stale.locateOrNull(SHUFFLE, 20, "2"));
  }

  @Test
  void nobodyRegistersOrPublishesAsARemovedExecutor() {
    master.executorRemoved("1");
    // Not even from 1's own connection: the id stays retired.
    Throwable e = assertThrows(Throwable.class, () -> MetadataRpc.registerTransport(master1,
        "1", "tcp", new PeerAddress("10.6.6.6", 6666), stats1));
    assertTrue(chain(e).contains("executor 1 was removed"), chain(e));
    e = assertThrows(Throwable.class, () -> MetadataRpc.publish(master1, SHUFFLE, 11,
        DescriptorCodec.encodeEntry(output(11, "1"))));
    assertTrue(chain(e).contains("executor 1 was removed"), chain(e));
    // Nor from another executor's.
    e = assertThrows(Throwable.class, () -> MetadataRpc.registerTransport(master2, "1", "tcp",
        new PeerAddress("10.6.6.6", 6666), stats1));
    assertTrue(chain(e).contains("executor 1 was removed"), chain(e));
    assertEquals(3, master.guard().refusals());
    assertNull(reader().locateOrNull(SHUFFLE, 10, "1"));
    assertNull(reader().locateOrNull(SHUFFLE, 11, "1"));
  }

  private static String chain(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c).append(" <- ");
    }
    return b.toString();
  }
}
