/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.apache.spark.network.shuffle.BlockStoreClient;
import org.apache.spark.network.shuffle.DownloadFileManager;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.reader.RdmaBlockStoreClient;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reader's side of a removed executor: the real driver endpoints and a reader's
 * RdmaBlockStoreClient over a transport whose connections are refused (the executor's
 * process is gone) and a stand-in for Spark's own client. With a shuffle service named by
 * Spark, a read that fails at a removed executor goes to Spark's client; at a live one it
 * stays a failure; without a shuffle service a removed executor's blocks fail at once.
 */
class RemovedExecutorReadTest {
  private static final int SHUFFLE = 3;
  private static final int SERVICE_PORT = 7337;
  private static final String BLOCK = "shuffle_3_10_1";

  private MetadataFixture meta;
  private final List<String> fallbackCalls = Collections.synchronizedList(new ArrayList<>());
  private final LinkedBlockingQueue<String> outcomes = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() {
    meta = new MetadataFixture();
    meta.registerShuffle(SHUFFLE, 4);
    meta.registerExecutor("1", new PeerAddress("127.0.0.1", 1));
    meta.publish(new MapOutputDescriptor(SHUFFLE, 10, "1", 4, 0x7f0000000000L, 0x1234, 100,
        1L << 30, new long[] {0x7e0000000000L}, new int[] {0x5678}));
  }

  @AfterEach
  void stop() {
    if (meta != null) {
      meta.close();
    }
  }

  private RdmaBlockStoreClient client(ShuffleTableCache tables, int servicePort) {
    return new RdmaBlockStoreClient(new RefusingTransport(), tables,
        new TransportConf("shuffle", MapConfigProvider.EMPTY), new FakeSparkClient(),
        1 << 20, false, servicePort);
  }

  private String fetch(RdmaBlockStoreClient client, int port) throws InterruptedException {
    client.fetchBlocks("127.0.0.1", port, "1", new String[] {BLOCK},
        new BlockFetchingListener() {
          @Override
          public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
            outcomes.add("success " + blockId);
          }

          @Override
          public void onBlockFetchFailure(String blockId, Throwable e) {
            outcomes.add("failure " + blockId + ": " + e.getMessage());
          }
        }, null);
    String outcome = outcomes.poll(30, TimeUnit.SECONDS);
    assertNotNull(outcome, "no outcome within 30 s");
    return outcome;
  }

  @Test
  void aStaleReadAtARemovedExecutorGoesToTheShuffleService() throws Exception {
    ShuffleTableCache tables = meta.tables();
    assertNotNull(tables.locateOrNull(SHUFFLE, 10, "1")); // the directory before the removal
    meta.master.executorRemoved("1");
    RdmaBlockStoreClient client = client(tables, SERVICE_PORT);
    assertEquals("success " + BLOCK, fetch(client, SERVICE_PORT));
    assertEquals(List.of("127.0.0.1:" + SERVICE_PORT + " 1 " + BLOCK), fallbackCalls);
    assertEquals(0, client.stats().failedBlocks.get());
    assertEquals(1, client.stats().fallbackBlocks.get());
    assertEquals(1, client.stats().removedExecutorBlocks.get());
    // Known now: the next fetch goes to Spark's client without trying the transport.
    assertEquals("success " + BLOCK, fetch(client, SERVICE_PORT));
    assertEquals(2, client.stats().fallbackBlocks.get());
    assertEquals(1, client.stats().removedExecutorBlocks.get());
    client.close();
  }

  @Test
  void aFailedReadAtALiveExecutorStaysAFailure() throws Exception {
    RdmaBlockStoreClient client = client(meta.tables(),
        SERVICE_PORT);
    String outcome = fetch(client, SERVICE_PORT);
    assertTrue(outcome.startsWith("failure " + BLOCK + ": cannot connect"), outcome);
    assertTrue(fallbackCalls.isEmpty(), fallbackCalls.toString());
    assertEquals(1, client.stats().failedBlocks.get());
    client.close();
  }

  @Test
  void withoutAShuffleServiceARemovedExecutorsBlocksFailAtOnce() throws Exception {
    meta.master.executorRemoved("1");
    RdmaBlockStoreClient client = client(meta.tables(), -1);
    String outcome = fetch(client, 40001); // Spark names the executor's block manager
    assertTrue(outcome.contains("executor 1 was removed"), outcome);
    assertTrue(fallbackCalls.isEmpty(), fallbackCalls.toString());
    client.close();
  }

  /** Every connection refused, as to an executor whose process is gone. */
  private static final class RefusingTransport implements ShuffleTransport {
    private final TransportStats stats = new TransportStats(false);

    @Override
    public String name() {
      return "tcp";
    }

    @Override
    public PeerAddress localAddress() {
      return new PeerAddress("127.0.0.1", 2);
    }

    @Override
    public RegisteredRegion register(ByteBuffer memory) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Void> deregister(RegisteredRegion region) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public TransportChannel connect(PeerAddress peer) throws IOException {
      throw new ConnectException("Connection refused: " + peer);
    }

    @Override
    public void close() {
    }

    @Override
    public TransportStats stats() {
      return stats;
    }
  }

  /** Spark's own client, serving every block it is asked for (as the shuffle service). */
  private final class FakeSparkClient extends BlockStoreClient {
    @Override
    public void fetchBlocks(String host, int port, String execId, String[] blockIds,
        BlockFetchingListener listener, DownloadFileManager downloadFileManager) {
      for (String id : blockIds) {
        fallbackCalls.add(host + ":" + port + " " + execId + " " + id);
        listener.onBlockFetchSuccess(id, new NioManagedBuffer(ByteBuffer.allocate(4)));
      }
    }

    @Override
    public void close() {
    }
  }
}
