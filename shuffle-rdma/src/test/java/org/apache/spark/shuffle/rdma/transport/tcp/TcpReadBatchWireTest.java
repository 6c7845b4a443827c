/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.apache.spark.shuffle.rdma.testing.TestFiles.mapFile;
import static org.apache.spark.shuffle.rdma.testing.TestFiles.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The batch protocol on the wire, from a raw socket (see {@link ReadBatch}): a batch is one
 * request and one answer frame, however many reads it holds; a refused read is refused inside
 * the answer with its reason while the others are served; a malformed batch is refused whole
 * and the connection keeps serving.
 */
class TcpReadBatchWireTest {
  @TempDir
  File dir;

  private TcpTransport server;
  private Socket socket;
  private DataOutputStream out;
  private DataInputStream in;

  @BeforeEach
  void start() throws Exception {
    server = TcpTestSupport.transport();
    connect();
  }

  private void connect() throws Exception {
    socket = new Socket();
    socket.connect(new InetSocketAddress(server.localAddress().host(),
        server.localAddress().port()), 5000);
    socket.setSoTimeout(5000);
    out = new DataOutputStream(socket.getOutputStream());
    in = new DataInputStream(socket.getInputStream());
  }

  @AfterEach
  void stop() throws Exception {
    socket.close();
    server.close();
  }

  /** Sends an RpcRequest frame with {@code body}. */
  private void sendRpc(long requestId, byte[] body) throws Exception {
    out.writeLong(8 + 1 + 8 + 4 + body.length);
    out.writeByte(3); // RpcRequest
    out.writeLong(requestId);
    out.writeInt(body.length);
    out.write(body);
    out.flush();
  }

  /** A batch of reads, each {key, address, length}. */
  private static byte[] batch(long batchId, long[][] reads) {
    ByteBuffer b = ByteBuffer.allocate(13 + 16 * reads.length);
    b.put((byte) 'B').putLong(batchId).putInt(reads.length);
    for (long[] r : reads) {
      b.putInt((int) r[0]).putLong(r[1]).putInt((int) r[2]);
    }
    return b.array();
  }

  /** The next frame, without its 8-byte length. */
  private byte[] nextFrame() throws Exception {
    long len = in.readLong();
    byte[] frame = new byte[(int) (len - 8)];
    in.readFully(frame);
    return frame;
  }

  @Test
  void aBatchIsOneRequestAndOneAnswerFrameWithPerReadRefusals() throws Exception {
    byte[] content = randomBytes(20_000, 31);
    RegisteredRegion region = server.register(mapFile(dir, content));
    int key = region.key();
    long a = region.address();
    sendRpc(77, batch(4242, new long[][] {
        {key, a + 100, 300}, {key ^ 0x5a5a5a5a, a, 10}, {key, a + 19_990, 20},
        {key, a + 5000, 4096}}));

    ByteBuffer f = ByteBuffer.wrap(nextFrame());
    assertEquals(1, f.get(), "a ChunkFetchSuccess");
    assertEquals(4242L, f.getLong(), "for the batch's answer id");
    assertEquals(0, f.getInt());
    assertEquals(4, f.getInt(), "statuses of 4 reads");
    assertEquals(300, f.getInt());
    assertEquals(ReadBatch.REFUSED, f.getInt());
    byte[] reason = new byte[f.getShort()];
    f.get(reason);
    assertEquals(Refusal.NO_SUCH_BYTES, new String(reason, StandardCharsets.UTF_8));
    assertEquals(ReadBatch.REFUSED, f.getInt());
    reason = new byte[f.getShort()];
    f.get(reason);
    // A dead key and a range past the end read the same: no liveness, no size.
    assertEquals(Refusal.NO_SUCH_BYTES, new String(reason, StandardCharsets.UTF_8));
    assertEquals(4096, f.getInt());
    byte[] data = new byte[f.remaining()];
    f.get(data);
    byte[] expected = new byte[300 + 4096];
    System.arraycopy(content, 100, expected, 0, 300);
    System.arraycopy(content, 5000, expected, 300, 4096);
    assertArrayEquals(expected, data, "the served reads' bytes, in request order");

    // Nothing else answers the batch: no frame per read, no RPC answer.
    socket.setSoTimeout(500);
    assertThrows(SocketTimeoutException.class, in::readLong);
    assertEquals(2, server.stats().readsServed.get());
    assertEquals(2, server.stats().readsRefused.get());
  }

  /**
   * 1,000 batches of 1 to 64 reads mutated from valid ones (inside the region; around its
   * end; an offset overflowing 32 bits; length 0, negative or huge; a key one bit off; the
   * address's upper half one bit off; random), on one
   * connection: each batch gets one answer, each read in it is served byte-exact exactly
   * when it lies inside the live region, and refused otherwise.
   */
  @Test
  void fuzzedBatchesGetExactBytesOrRefusalsPerRead() throws Exception {
    int size = 65_536;
    byte[] content = randomBytes(size, 33);
    RegisteredRegion region = server.register(mapFile(dir, content));
    int key = region.key();
    long base = region.address();
    java.util.Random rnd = new java.util.Random(34);
    int served = 0;
    int refused = 0;
    long bytes = 0;
    for (int batch = 1; batch <= 1000; batch++) {
      int n = 1 + rnd.nextInt(64);
      long[][] reads = new long[n][];
      long asked = 0;
      for (int i = 0; i < n; i++) {
        long addr = rnd.nextInt(size);
        int len = 1 + rnd.nextInt(Math.min(4096, size - (int) addr));
        int k = key;
        long upper = base;
        switch (rnd.nextInt(7)) {
          case 0: // valid
            break;
          case 1: // around the end
            addr = size - rnd.nextInt(64);
            len = 1 + rnd.nextInt(128);
            break;
          case 2: // offset + length overflows 32 bits, or the address's upper half is off
            if (rnd.nextBoolean()) {
              addr = 0xFFFFFFFFL - rnd.nextInt(16);
            } else {
              upper = base ^ (1L << (32 + rnd.nextInt(31)));
            }
            len = 1 + rnd.nextInt(64);
            break;
          case 3: // bad length
            len = new int[] {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE}[rnd.nextInt(4)];
            break;
          case 4: // a key one bit off
            k = key ^ (1 << rnd.nextInt(32));
            break;
          case 5: // random
            k = rnd.nextInt();
            upper = rnd.nextLong() & ~0xFFFFFFFFL;
            addr = rnd.nextInt() & 0xFFFFFFFFL;
            len = rnd.nextInt();
            break;
          default: // valid, larger
            addr = rnd.nextInt(size / 2);
            len = 1 + rnd.nextInt(size / 2);
        }
        if (asked + Math.max(0, len) > (n > 1 ? ReadBatch.TARGET_BYTES : 32 << 20)) {
          len = 1 + rnd.nextInt(64); // keep the batch within what one batch may ask
        }
        asked += Math.max(0, len);
        reads[i] = new long[] {k, upper + addr, len};
      }
      sendRpc(batch, batch(batch, reads));
      ByteBuffer f = ByteBuffer.wrap(nextFrame());
      assertEquals(1, f.get(), "batch " + batch + " answered by one ChunkFetchSuccess");
      assertEquals(batch, f.getLong());
      f.getInt();
      assertEquals(n, f.getInt());
      int[] status = new int[n];
      for (int i = 0; i < n; i++) {
        status[i] = f.getInt();
        if (status[i] == ReadBatch.REFUSED) {
          int reasonLength = f.getShort();
          f.position(f.position() + reasonLength);
        }
      }
      for (int i = 0; i < n; i++) {
        long addr = reads[i][1] - base;
        int len = (int) reads[i][2];
        boolean inside = reads[i][0] == key && addr >= 0 && len > 0 && addr + len <= size;
        if (!inside) {
          assertEquals(ReadBatch.REFUSED, status[i], "batch " + batch + " read " + i);
          refused++;
          continue;
        }
        assertEquals(len, status[i], "batch " + batch + " read " + i);
        byte[] got = new byte[len];
        f.get(got);
        assertArrayEquals(Arrays.copyOfRange(content, (int) addr, (int) addr + len), got,
            "batch " + batch + " read " + i);
        served++;
        bytes += len;
      }
      assertEquals(0, f.remaining(), "batch " + batch + ": no byte beyond the served reads");
    }
    System.out.println("[batch fuzz] 1000 batches: " + served + " reads served (" + bytes
        + " bytes), " + refused + " refused");
    assertEquals(served, server.stats().readsServed.get());
    assertEquals(refused, server.stats().readsRefused.get());
    assertEquals(bytes, server.stats().bytesServed.get());
    assertTrue(served > 1000 && refused > 1000, "both outcomes exercised");
  }

  /**
   * Malformed batches, and batches asking for more than a batch may, are refused whole with
   * a one-line RpcFailure (no stack trace), and the connection is closed: a well-behaved
   * client never sends one. A new connection is served.
   */
  @Test
  void malformedBatchIsRefusedWholeAndItsConnectionClosed() throws Exception {
    byte[] content = randomBytes(1000, 32);
    RegisteredRegion region = server.register(mapFile(dir, content));
    long a = region.address();
    int key = region.key();
    byte[] announcesMore = batch(5, new long[][] {{key, a, 10}});
    ByteBuffer.wrap(announcesMore).putInt(9, 3); // 3 reads announced, 1 present
    long[][] overCap = new long[2][];
    overCap[0] = new long[] {key, a, ReadBatch.TARGET_BYTES};
    overCap[1] = new long[] {key, a, 1};
    byte[][] bad = {
        "hello".getBytes(StandardCharsets.UTF_8), // not a batch
        announcesMore,
        batch(0, new long[][] {{key, a, 10}}), // batch id 0 is out of range
        batch(6, new long[0][]), // no read
        batch(8, overCap), // two reads asking for more than TARGET_BYTES
        batch(9, new long[][] {{key, a, (32 << 20) + 1}}), // one read over maxReadSize
    };
    for (int i = 0; i < bad.length; i++) {
      sendRpc(100 + i, bad[i]);
      ByteBuffer f = ByteBuffer.wrap(nextFrame());
      assertEquals(5, f.get(), "an RpcFailure for bad batch " + i);
      assertEquals(100L + i, f.getLong());
      byte[] why = new byte[f.getInt()];
      f.get(why);
      String text = new String(why, StandardCharsets.UTF_8).trim();
      assertTrue(!text.contains("\tat ") && !text.contains("\n"), "one line: " + text);
      assertEquals(-1, in.read(), "bad batch " + i + " closes its connection");
      socket.close();
      connect();
    }
    assertEquals(0, server.stats().readsServed.get());

    sendRpc(200, batch(7, new long[][] {{key, a + 10, 20}}));
    ByteBuffer f = ByteBuffer.wrap(nextFrame());
    assertEquals(1, f.get());
    assertEquals(7L, f.getLong());
    f.getInt();
    assertEquals(1, f.getInt());
    assertEquals(20, f.getInt());
    byte[] data = new byte[f.remaining()];
    f.get(data);
    assertArrayEquals(Arrays.copyOfRange(content, 10, 30), data);
  }
}
