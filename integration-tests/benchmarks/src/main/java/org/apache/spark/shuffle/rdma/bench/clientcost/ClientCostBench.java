/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench.clientcost;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.reader.ReaderHarness;
import org.apache.spark.shuffle.rdma.transport.verbs.impl.LoopbackVerbsChannel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One operation is one fetch of {@link #blocksPerFetch} blocks of {@link #block} bytes, one
 * per map output, all indexes cached (steady state); the runner divides by the blocks. Paths:
 * <ul>
 * <li>{@code floor}: a plain copy of the same blocks' bytes from the mapping into the receive
 *     memory, nothing else: what the NIC's copy costs here, the floor.
 * <li>{@code reader}: the plugin's reader (BlockFetch, IndexCache, batching, coalescing
 *     checks, the pooled buffers handed to Spark's listener) against a loopback channel that
 *     copies each READ from the mapping into the real receive pool and runs its callback at
 *     once.
 * <li>{@code verbs}: the same reader over the verbs layer's per-READ Java work (slot table,
 *     ReadRecovery, completion handling on a completion thread woken per post as by a CQ
 *     event, final deliveries on it and the CallbackBatcher's hand-off of the rest to the
 *     CallbackDispatcher's threads), completions scripted instead of polled from a NIC. The
 *     task thread parks until the last block arrived, as Spark's task waits on its fetch
 *     results.
 * <li>{@code verbs64}: {@code verbs} with the window of a peer on hardware by default: 4 queue
 *     pairs of READ depth 16 ({@code verbs.queuePairsPerPeer} 0 means 4 on hardware, 1 on
 *     software devices), approximated by one slot table of 64 slots and one completion
 *     thread (the lanes' striping, a few array operations per post, is not run). With 64
 *     blocks per fetch every READ is posted at once, so a fetch wakes the completion thread
 *     about once instead of once per 16 READs.
 * <li>{@code spark}: Spark's own per-block client path for the same blocks, in process
 *     ({@link SparkClientPath}): OneForOneBlockFetcher, TransportClient, Spark's decoders,
 *     the blocks' bytes copied into pooled buffers as socket reads would fill them.
 * </ul>
 * The listener holds every block until the fetch is over, then releases them; every 64th
 * fetch and once per iteration (untimed) every block's bytes are compared with the mapping.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ClientCostBench {
  /** Partitions per map output: fetches rotate through them. */
  static final int PARTITIONS = 4;
  /** READ window per queue pair (a ConnectX's max_qp_rd_atom is 16). */
  static final int SLOTS = 16;
  /** Queue pairs per peer on hardware by default (path verbs64). */
  static final int HARDWARE_LANES = 4;
  static final int MAX_READ = 4 << 20;
  static final long POOL = 32L << 20;

  @Param({"4096", "65536", "1048576"})
  public int block;

  @Param({"floor", "reader", "verbs", "verbs64", "spark"})
  public String path;

  private Outputs outputs;
  private LoopbackVerbsChannel channel;
  private SparkClientPath spark;
  private ReaderHarness reader;
  private Collector collector;
  private ByteBuffer receive;
  private int op;

  /**
   * Blocks one fetch asks for: Spark sends a request per up to maxBytesInFlight / 5 (48m / 5)
   * of blocks; 8 MiB of them here, at most 64.
   */
  static int blocksPerFetch(int block) {
    return Math.max(1, Math.min(64, (8 << 20) / block));
  }

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    Path dir = Paths.get(System.getProperty("clientcost.dir", System.getProperty("java.io.tmpdir")));
    outputs = new Outputs(block, blocksPerFetch(block), PARTITIONS, dir);
    receive = ByteBuffer.allocateDirect(block * outputs.outputs());
    if (!path.equals("floor")) {
      if (path.equals("spark")) {
        spark = new SparkClientPath(outputs);
      } else if (path.equals("reader") || path.startsWith("verbs")) {
        boolean verbs = path.startsWith("verbs");
        int window = path.equals("verbs64") ? SLOTS * HARDWARE_LANES : SLOTS;
        if (verbs && !path.equals("verbs") && !path.equals("verbs64")) {
          throw new IllegalArgumentException("path " + path + ": verbs or verbs64");
        }
        channel = new LoopbackVerbsChannel(outputs, POOL, MAX_READ, window, verbs);
        reader = new ReaderHarness(64L << 20);
      } else {
        throw new IllegalArgumentException("path " + path + ": floor, reader, verbs, verbs64 or spark");
      }
      collector = new Collector(outputs);
      // The first fetch reads every index: the measured ones find them cached.
      for (int r = 0; r < PARTITIONS; r++) {
        fetch(r, true);
      }
    }
  }

  /** Untimed: one fetch with every byte checked, and the readers' counters. */
  @Setup(Level.Iteration)
  public void check() {
    if (collector == null) {
      return;
    }
    if (reader == null) {
      fetch(op % PARTITIONS, true);
      return;
    }
    long before = reader.dataReads();
    fetch(op % PARTITIONS, true);
    if (reader.dataReads() - before != outputs.outputs()) {
      throw new IllegalStateException("a fetch of " + outputs.outputs() + " blocks posted "
          + (reader.dataReads() - before) + " data reads");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    if (channel != null) {
      channel.close();
    }
    if (spark != null) {
      spark.close();
    }
    outputs.close();
  }

  @Benchmark
  public int fetch() {
    int reduce = op++ % PARTITIONS;
    if (collector == null) {
      for (int m = 0; m < outputs.outputs(); m++) {
        receive.put(m * block, outputs.data(m), reduce * block, block);
      }
      return receive.get(0);
    }
    fetch(reduce, (op & 63) == 0);
    return reduce;
  }

  private void fetch(int reduce, boolean checkBytes) {
    collector.reset();
    if (spark != null) {
      spark.fetch(reduce, collector);
    } else {
      reader.fetch(outputs.descriptors, outputs.ids[reduce], reduce, channel, collector);
    }
    collector.await();
    collector.checkAndRelease(reduce, checkBytes);
  }
}
