/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads that get no answer fail after spark.shuffle.rdma.readTimeout: to a silent peer, queued
 * behind an unanswered read, and one stuck read on a connection kept busy by answered reads
 * (so Netty's idle timeout never fires); concurrent connects to one peer share one channel and one connection.
 */
class TcpReadTimeoutTest {
  private static final long TIMEOUT_MS = 1000;
  /**
   * Up to ten times the timeout: what these tests guard against is a read that never fails (or
   * fails only at the default 120 s), not a busy machine's late sweep (the 2.5 s margin before
   * assumed a quiet one).
   */
  private static final long MARGIN_MS = 9000;

  @TempDir
  File dir;

  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  private TcpTransport client(int maxInFlight) throws Exception {
    TcpTransport t = TcpTestSupport.transport(new SparkConf(false)
        .set("spark.shuffle.rdma.readTimeout", TIMEOUT_MS + "ms")
        .set("spark.shuffle.rdma.maxReadsInFlightPerPeer", String.valueOf(maxInFlight)), null);
    toClose.add(t);
    return t;
  }

  /** The address of the one read the answering peer never answers. */
  private static final long STUCK_ADDRESS = 4242;

  /**
   * A peer that accepts connections and reads every request. Silent, it never answers;
   * otherwise it answers every read (zero bytes of the asked length) except the one at
   * {@link #STUCK_ADDRESS}, so a connection with a stuck read stays busy and never idle.
   */
  private PeerAddress fakePeer(boolean answers) throws Exception {
    ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    toClose.add(ss);
    Thread t = new Thread(() -> {
      try {
        while (true) {
          Socket s = ss.accept();
          toClose.add(s);
          Thread serve = new Thread(() -> {
            try {
              java.io.DataInputStream in = new java.io.DataInputStream(
                  new java.io.BufferedInputStream(s.getInputStream()));
              java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
              while (true) {
                long frameLength = in.readLong();
                byte[] frame = new byte[(int) frameLength - 8];
                in.readFully(frame);
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(frame);
                if (!answers || b.get() != 3) { // only read batches (RpcRequests) get answers
                  continue;
                }
                b.getLong(); // the RPC's request id
                b.getInt(); // its body's length
                ReadBatch.Request req = ReadBatch.decodeRequest(b, 1L << 30);
                int data = 0;
                boolean stuck = false;
                for (int i = 0; i < req.size(); i++) {
                  data += req.lengths[i];
                  stuck |= req.addresses[i] == STUCK_ADDRESS;
                }
                if (stuck) {
                  continue;
                }
                int body = 4 + 4 * req.size() + data;
                out.writeLong(8 + 1 + 12 + body);
                out.writeByte(1); // ChunkFetchSuccess
                out.writeLong(req.batchId); // the batch's answer id (batchId, 0)
                out.writeInt(0);
                out.writeInt(req.size());
                for (int i = 0; i < req.size(); i++) {
                  out.writeInt(req.lengths[i]);
                }
                out.write(new byte[data]);
                out.flush();
              }
            } catch (Exception ignored) {
              // closed
            }
          });
          serve.setDaemon(true);
          serve.start();
        }
      } catch (Exception ignored) {
        // server socket closed
      }
    });
    t.setDaemon(true);
    t.start();
    return new PeerAddress(ss.getInetAddress().getHostAddress(), ss.getLocalPort());
  }

  /** Posts n reads (the first waits in flight, the others queue with maxInFlight 1). */
  private void assertAllTimeOut(TcpTransport client, PeerAddress peer, int n) throws Exception {
    TransportChannel ch = client.connect(peer);
    List<ReadResult> r = TcpTestSupport.results(n);
    List<ReadRequest> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      batch.add(new ReadRequest(i * 10L, 0x1234, 10, r.get(i), null));
    }
    long t0 = System.nanoTime();
    ch.read(batch);
    for (ReadResult x : r) {
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> x.future.get(TIMEOUT_MS + MARGIN_MS, TimeUnit.MILLISECONDS),
          "a read without answer must fail within readTimeout + margin");
      assertTrue(e.getCause().getMessage().contains("spark.shuffle.rdma.readTimeout"),
          e.getCause().getMessage());
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(ms >= TIMEOUT_MS, "failed before the timeout: " + ms + " ms");
    assertTrue(ms <= TIMEOUT_MS + MARGIN_MS, "took " + ms + " ms");
    assertEquals(n, client.stats().readsFailed.get());
    assertFalse(ch.isActive(), "a timed-out channel is failed");
    assertTrue(client.connect(peer) != ch, "the next connect opens a fresh connection");
  }

  @Test
  void readToAPeerThatNeverAnswersFailsAfterReadTimeout() throws Exception {
    assertAllTimeOut(client(256), fakePeer(false), 1);
  }

  @Test
  void readsQueuedBehindAnUnansweredReadFailAfterReadTimeout() throws Exception {
    assertAllTimeOut(client(1), fakePeer(false), 5);
  }

  /**
   * One read never answered while others to the same peer keep going and get answers: the
   * connection is never quiet, so Netty's idle timeout never fires; the read must still fail
   * after readTimeout.
   */
  @Test
  void stuckReadOnABusyConnectionFailsAfterReadTimeout() throws Exception {
    TcpTransport client = client(256);
    TransportChannel ch = client.connect(fakePeer(true));
    ReadResult stuck = new ReadResult();
    long t0 = System.nanoTime();
    ch.read(List.of(new ReadRequest(STUCK_ADDRESS, 0x77, 10, stuck, null)));
    int answered = 0;
    long until = t0 + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS + MARGIN_MS);
    for (int i = 0; !stuck.future.isDone() && System.nanoTime() < until; i++) {
      ReadResult other = new ReadResult();
      ch.read(List.of(new ReadRequest(i * 16L, 0x77, 16, other, null)));
      try {
        assertEquals(16, other.future.get(5, TimeUnit.SECONDS).length);
        answered++;
      } catch (ExecutionException channelFailed) {
        break; // the stuck read failed the channel meanwhile
      }
      Thread.sleep(50);
    }
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> stuck.future.get(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS),
        "the stuck read must fail within readTimeout + margin");
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(e.getCause().getMessage().contains("spark.shuffle.rdma.readTimeout"),
        e.getCause().getMessage());
    assertTrue(ms >= TIMEOUT_MS && ms <= TIMEOUT_MS + MARGIN_MS, "failed after " + ms + " ms");
    assertTrue(answered >= 5, "the connection was busy with answered reads: " + answered);
  }

  @Test
  void concurrentConnectsShareOneChannelAndOneConnection() throws Exception {
    TcpTransport server = TcpTestSupport.transport();
    toClose.add(server);
    byte[] content = TestFiles.randomBytes(4096, 21);
    RegisteredRegion region = server.register(TestFiles.mapFile(dir, content));
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 10; round++) {
        TcpTransport client = client(256);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<TransportChannel>> got = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          got.add(pool.submit(() -> {
            start.await();
            TransportChannel ch = client.connect(server.localAddress());
            // Identical reads on every channel: on a shared client their ids would collide.
            ReadResult r = new ReadResult();
            ch.read(List.of(new ReadRequest(region.address() + 100, region.key(), 200, r, null)));
            assertArrayEquals(Arrays.copyOfRange(content, 100, 300),
                r.future.get(10, TimeUnit.SECONDS));
            return ch;
          }));
        }
        TransportChannel first = got.get(0).get(30, TimeUnit.SECONDS);
        for (Future<TransportChannel> f : got) {
          assertSame(first, f.get(30, TimeUnit.SECONDS), "round " + round);
        }
        assertEquals(1, client.stats().connectionsOpened.get(), "round " + round);
        client.close();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
