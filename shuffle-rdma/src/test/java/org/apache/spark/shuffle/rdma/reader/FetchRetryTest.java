/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.reader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.metadata.DescriptorCodec;
import org.apache.spark.shuffle.rdma.metadata.MetadataFixture;
import org.apache.spark.shuffle.rdma.metadata.MetadataRpc;
import org.apache.spark.shuffle.rdma.metadata.NodeServiceId;
import org.apache.spark.shuffle.rdma.metadata.ShuffleTableCache;
import org.apache.spark.shuffle.rdma.testing.CuttableRelay;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRefusedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fabric blips against the real reader: a reducer's RdmaBlockStoreClient reads real
 * registered map outputs from a real tcp transport through a relay that resets every
 * connection mid-fetch (the peer lives on) or stops answering connects (the peer is gone),
 * with the driver's real metadata endpoints resolving the blocks. A blip costs a retry, not
 * a block, also when the reader reads a removed executor's outputs from its node service; a
 * refusal and a vanished peer are not retried; every block ends exactly once.
 */
class FetchRetryTest {
  private static final int SHUFFLE = 7;
  private static final int OUTPUTS = 6;
  private static final int PARTITIONS = 8;
  private static final int PARTITION_BYTES = 48 * 1024;

  @TempDir
  File dir;
  private ReaderFixture f;
  private MetadataFixture meta;
  private CuttableRelay relay;
  private final List<ReaderFixture.Output> outputs = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    f = new ReaderFixture(dir, 64 * 1024, 1L << 20);
    meta = new MetadataFixture();
    relay = new CuttableRelay("127.0.0.1", f.server.localAddress().port());
    meta.registerShuffle(SHUFFLE, PARTITIONS);
    // The executor serves at the relay: every read of this test crosses the "wire".
    meta.registerExecutor("exec-1", new PeerAddress("127.0.0.1", relay.port()));
    int[] sizes = new int[PARTITIONS];
    java.util.Arrays.fill(sizes, PARTITION_BYTES);
    for (int m = 0; m < OUTPUTS; m++) {
      ReaderFixture.Output o = f.register(SHUFFLE, m, sizes, 100 + m);
      meta.publish(o.descriptor);
      outputs.add(o);
    }
  }

  @AfterEach
  void stop() {
    relay.close();
    meta.close();
    f.close();
  }

  private RdmaBlockStoreClient client(int maxRetries, String retryWait) {
    Map<String, String> io = new HashMap<>();
    io.put("spark.shuffle.io.maxRetries", String.valueOf(maxRetries));
    io.put("spark.shuffle.io.retryWait", retryWait);
    return new RdmaBlockStoreClient(f.client, meta.tables(),
        new TransportConf("shuffle", new MapConfigProvider(io)), null, 1 << 20, false, -1);
  }

  /** Every block of every output, in Spark's block-id form. */
  private static String[] allBlocks() {
    List<String> ids = new ArrayList<>();
    for (int m = 0; m < OUTPUTS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        ids.add("shuffle_" + SHUFFLE + "_" + m + "_" + p);
      }
    }
    return ids.toArray(new String[0]);
  }

  /** Each block's outcomes, counted: a block must end exactly once. */
  private static final class Outcomes implements BlockFetchingListener {
    final Map<String, byte[]> bytes = new ConcurrentHashMap<>();
    final Map<String, Throwable> failures = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> ends = new ConcurrentHashMap<>();
    final CountDownLatch all;

    Outcomes(int blocks) {
      all = new CountDownLatch(blocks);
    }

    @Override
    public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
      try {
        bytes.put(blockId, ReadResult.bytesOf(data));
      } catch (Exception e) {
        failures.put(blockId, e);
      }
      end(blockId);
    }

    @Override
    public void onBlockFetchFailure(String blockId, Throwable e) {
      failures.put(blockId, e);
      end(blockId);
    }

    private void end(String blockId) {
      ends.computeIfAbsent(blockId, b -> new AtomicInteger()).incrementAndGet();
      all.countDown();
    }

    void await() throws InterruptedException {
      assertTrue(all.await(60, TimeUnit.SECONDS), "not every block ended within 60 s: "
          + ends.size() + " ended");
      Thread.sleep(300); // a second outcome of any block would arrive by now
      ends.forEach((b, n) -> assertEquals(1, n.get(), b + " ended " + n + " times"));
    }
  }

  private Outcomes fetch(RdmaBlockStoreClient client, String[] ids) throws Exception {
    Outcomes out = new Outcomes(ids.length);
    client.fetchBlocks("127.0.0.1", 40000, "exec-1", ids, out, null);
    out.await();
    return out;
  }

  private void assertBytes(Outcomes out, int map, int partition) {
    String id = "shuffle_" + SHUFFLE + "_" + map + "_" + partition;
    assertArrayEquals(outputs.get(map).bytes(partition, partition + 1), out.bytes.get(id),
        id + " failed: " + out.failures.get(id));
  }

  @Test
  void aConnectionResetMidFetchIsRetriedAndEveryBlockArrivesOnce() throws Exception {
    RdmaBlockStoreClient client = client(3, "200ms");
    relay.cutAfter(512 * 1024); // of 2.3 MB: the reset lands mid-fetch
    Outcomes out = fetch(client, allBlocks());
    assertEquals(1, relay.cuts.get(), "the relay reset the connection");
    assertTrue(out.failures.isEmpty(), out.failures.size() + " failed, e.g. "
        + out.failures.values().stream().findFirst().map(String::valueOf).orElse(""));
    for (int m = 0; m < OUTPUTS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertBytes(out, m, p);
      }
    }
    assertTrue(client.stats().fetchRetries.get() >= 1, "no retry counted");
    assertTrue(relay.connections.get() >= 2, "no reconnect: " + relay.connections);
    assertEquals(0, client.stats().failedBlocks.get());
    client.close();
  }

  @Test
  void withoutRetriesTheSameResetFailsBlocks() throws Exception {
    RdmaBlockStoreClient client = client(0, "200ms");
    relay.cutAfter(512 * 1024);
    Outcomes out = fetch(client, allBlocks());
    assertTrue(!out.failures.isEmpty(), "a reset with spark.shuffle.io.maxRetries=0 must fail "
        + "the blocks still in flight");
    assertEquals(out.failures.size(), client.stats().failedBlocks.get());
    assertEquals(0, client.stats().fetchRetries.get());
    client.close();
  }

  @Test
  void aRevokedOutputAmongRetriedReadsFailsAloneAndIsNotRetried() throws Exception {
    RdmaBlockStoreClient client = client(3, "200ms");
    f.deregister(outputs.get(2));
    // The reset and the refusals in one fetch: the retry re-reads the innocent blocks, the
    // revoked output's blocks fail with the refusal, each block ends once.
    relay.cutAfter(512 * 1024);
    Outcomes out = fetch(client, allBlocks());
    for (int m = 0; m < OUTPUTS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        String id = "shuffle_" + SHUFFLE + "_" + m + "_" + p;
        if (m == 2) {
          assertTrue(ReadRefusedException.isRefusal(out.failures.get(id)),
              id + ": " + out.failures.get(id));
        } else {
          assertBytes(out, m, p);
        }
      }
    }
    assertEquals(PARTITIONS, client.stats().failedBlocks.get());
    client.close();
  }

  @Test
  void aRefusalAloneIsNeverRetried() throws Exception {
    RdmaBlockStoreClient client = client(3, "5s");
    f.deregister(outputs.get(0));
    long t0 = System.nanoTime();
    Outcomes out = fetch(client, new String[] {"shuffle_" + SHUFFLE + "_0_1",
        "shuffle_" + SHUFFLE + "_1_1"});
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(ReadRefusedException.isRefusal(out.failures.get("shuffle_" + SHUFFLE + "_0_1")),
        String.valueOf(out.failures));
    assertBytes(out, 1, 1);
    assertEquals(0, client.stats().fetchRetries.get());
    assertTrue(seconds < 4, "a refusal waited for a retry: " + seconds + " s");
    client.close();
  }

  @Test
  void aResetWhileReadingARemovedExecutorsOutputsFromItsNodeServiceIsRetried() throws Exception {
    // exec-9 handed every output over to the node service at the relay, then Spark removed
    // it; this reader knows of the removal. The service lives on: a reset costs a retry.
    PeerAddress service = new PeerAddress("127.0.0.1", relay.port());
    MetadataFixture.Executor e9 = meta.addExecutor("exec-9", new PeerAddress("127.0.0.1", 1));
    MetadataRpc.registerNodeService(e9.masterRef, "exec-9", service);
    int shuffle = SHUFFLE + 1;
    meta.registerShuffle(shuffle, PARTITIONS);
    int[] sizes = new int[PARTITIONS];
    java.util.Arrays.fill(sizes, PARTITION_BYTES);
    List<ReaderFixture.Output> handed = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int m = 0; m < OUTPUTS; m++) {
      ReaderFixture.Output o = f.register(shuffle, 50 + m, sizes, 200 + m);
      MetadataRpc.publishHandedOver(e9.masterRef, shuffle, 50 + m, "exec-9",
          DescriptorCodec.encodeEntry(o.descriptor.withExecutorId(NodeServiceId.of(service))));
      handed.add(o);
      for (int p = 0; p < PARTITIONS; p++) {
        ids.add("shuffle_" + shuffle + "_" + (50 + m) + "_" + p);
      }
    }
    meta.master.executorRemoved("exec-9");
    ShuffleTableCache tables = meta.tables();
    assertTrue(tables.departed(shuffle, "exec-9"));
    RdmaBlockStoreClient client = new RdmaBlockStoreClient(f.client, tables,
        new TransportConf("shuffle", new MapConfigProvider(Map.of(
            "spark.shuffle.io.maxRetries", "3", "spark.shuffle.io.retryWait", "200ms"))),
        null, 1 << 20, false, -1);
    relay.cutAfter(512 * 1024);
    Outcomes out = new Outcomes(ids.size());
    client.fetchBlocks("127.0.0.1", 40009, "exec-9", ids.toArray(new String[0]), out, null);
    out.await();
    assertEquals(1, relay.cuts.get(), "the relay reset the connection");
    assertTrue(out.failures.isEmpty(), out.failures.size() + " failed, e.g. "
        + out.failures.values().stream().findFirst().map(String::valueOf).orElse(""));
    for (int m = 0; m < OUTPUTS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        String id = "shuffle_" + shuffle + "_" + (50 + m) + "_" + p;
        assertArrayEquals(handed.get(m).bytes(p, p + 1), out.bytes.get(id), id);
      }
    }
    assertTrue(client.stats().fetchRetries.get() >= 1, "no retry counted");
    client.close();
  }

  @Test
  void aVanishedPeerFailsItsBlocksWithinTheRetryBudget() throws Exception {
    RdmaBlockStoreClient client = client(3, "1s");
    // Reset mid-fetch and refuse reconnects: the executor's process is gone.
    relay.cutAfter(512 * 1024);
    Thread killer = new Thread(() -> {
      while (relay.cuts.get() == 0) {
        Thread.onSpinWait();
      }
      relay.refuseFromNowOn();
    });
    killer.start();
    long t0 = System.nanoTime();
    Outcomes out = fetch(client, allBlocks());
    double seconds = (System.nanoTime() - t0) / 1e9;
    killer.join();
    assertTrue(!out.failures.isEmpty(), "nothing failed although the peer vanished");
    // One retry after the reset; its reconnect is refused, which ends the budget at once.
    assertEquals(1, client.stats().fetchRetries.get());
    assertTrue(seconds < 1 + 5, "took " + seconds + " s");
    client.close();
  }
}
