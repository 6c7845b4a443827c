/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.Test;

/**
 * A peer whose answer does not fit its batch (a prefix for another number of reads, a length
 * other than the one asked, data missing): the client fails that batch's reads, saying the
 * answer is malformed, and never hands out bytes from it; the next batch on the same
 * connection, answered correctly, is read.
 */
class TcpMalformedAnswerTest {
  /** How the fake peer answers its i-th batch (all reads of 8 bytes, content 7s). */
  private static void answer(DataOutputStream out, int i, long batchId, int n)
      throws Exception {
    ByteBuffer body = ByteBuffer.allocate(4 + 4 * n + 8 * n);
    switch (i) {
      case 0: // a prefix for one read more than the batch has
        body.putInt(n + 1);
        break;
      case 1: // the first read's length is not the one asked
        body.putInt(n).putInt(9);
        break;
      case 2: // the data part is missing its last byte
        body.putInt(n);
        for (int r = 0; r < n; r++) {
          body.putInt(8);
        }
        body.put(new byte[8 * n - 1]);
        break;
      default: // well-formed
        body.putInt(n);
        for (int r = 0; r < n; r++) {
          body.putInt(8);
        }
        for (int r = 0; r < 8 * n; r++) {
          body.put((byte) 7);
        }
    }
    body.flip();
    out.writeLong(8 + 1 + 12 + body.remaining());
    out.writeByte(1); // ChunkFetchSuccess
    out.writeLong(batchId);
    out.writeInt(0);
    out.write(body.array(), 0, body.remaining());
    out.flush();
  }

  @Test
  void malformedAnswersFailTheirBatchOnlyAndTheConnectionKeepsReading() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
         TcpTransport client = TcpTestSupport.transport()) {
      Thread peer = new Thread(() -> {
        try (Socket s = ss.accept()) {
          DataInputStream in = new DataInputStream(s.getInputStream());
          DataOutputStream out = new DataOutputStream(s.getOutputStream());
          for (int i = 0; ; i++) {
            byte[] frame = new byte[(int) in.readLong() - 8];
            in.readFully(frame);
            ByteBuffer b = ByteBuffer.wrap(frame);
            b.get(); // RpcRequest
            b.getLong();
            b.getInt();
            ReadBatch.Request req = ReadBatch.decodeRequest(b, 1L << 30);
            answer(out, i, req.batchId, req.size());
          }
        } catch (Exception closed) {
          // the test is over
        }
      });
      peer.setDaemon(true);
      peer.start();
      TransportChannel ch = client.connect(
          new PeerAddress(ss.getInetAddress().getHostAddress(), ss.getLocalPort()));
      for (int i = 0; i < 3; i++) {
        List<ReadResult> r = TcpTestSupport.results(2);
        ch.read(List.of(new ReadRequest(0, 0x55, 8, r.get(0), null),
            new ReadRequest(8, 0x55, 8, r.get(1), null)));
        for (ReadResult x : r) {
          ExecutionException e = assertThrows(ExecutionException.class,
              () -> x.future.get(10, TimeUnit.SECONDS), "malformed answer " + i);
          assertTrue(e.getCause().getMessage().contains("malformed answer"),
              e.getCause().getMessage());
        }
      }
      ReadResult ok = new ReadResult();
      ch.read(List.of(new ReadRequest(0, 0x55, 8, ok, null)));
      assertArrayEquals(new byte[] {7, 7, 7, 7, 7, 7, 7, 7},
          ok.future.get(10, TimeUnit.SECONDS));
      assertTrue(ch.isActive());
    }
  }
}
