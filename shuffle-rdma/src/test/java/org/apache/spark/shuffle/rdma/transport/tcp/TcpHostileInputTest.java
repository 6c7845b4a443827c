package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tcp server against hostile peers on raw sockets: crafted reads with bad keys, offsets
 * and lengths, random frames (a bounded fuzz run), a peer that trickles one byte at a time,
 * and a thousand idle connections. Nothing outside a registered region is ever served, each
 * bad read gets a failure that names the problem, and a well-behaved client keeps reading
 * correct bytes throughout.
 */
class TcpHostileInputTest {
  private static final byte CHUNK_FETCH_REQUEST = 0;
  private static final byte CHUNK_FETCH_SUCCESS = 1;
  private static final byte CHUNK_FETCH_FAILURE = 2;

  @TempDir
  File dir;

  private TcpTransport server;
  private TcpTransport client;
  private RegisteredRegion region;
  private byte[] content;

  @BeforeEach
  void start() throws Exception {
    server = TcpTestSupport.transport();
    client = TcpTestSupport.transport();
    content = TcpTestSupport.randomBytes(64 * 1024, 42);
    region = server.register(TcpTestSupport.mapFile(dir, content));
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  /** A well-behaved read through the real client must still return the right bytes. */
  private void assertServerStillServes() throws Exception {
    TransportChannel ch = client.connect(server.localAddress());
    TcpTestSupport.Result r = new TcpTestSupport.Result();
    ch.read(List.of(new ReadRequest(1000, region.key(), 5000, r, null)));
    assertArrayEquals(Arrays.copyOfRange(content, 1000, 6000), r.future.get(30, TimeUnit.SECONDS));
  }

  private Socket raw() throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(server.localAddress().host(), server.localAddress().port()),
        5000);
    s.setSoTimeout(10_000);
    return s;
  }

  /** Sends one ChunkFetchRequest frame carrying raw (streamId, chunkIndex). */
  private static void sendRead(DataOutputStream out, long streamId, int chunkIndex)
      throws IOException {
    out.writeLong(8 + 1 + 12);
    out.writeByte(CHUNK_FETCH_REQUEST);
    out.writeLong(streamId);
    out.writeInt(chunkIndex);
    out.flush();
  }

  /** Reads one response frame: returns its type; fills body with the payload after the id. */
  private static byte readResponse(DataInputStream in, List<byte[]> body) throws IOException {
    long frameLength = in.readLong();
    byte type = in.readByte();
    in.readLong();
    in.readInt();
    byte[] rest = new byte[(int) (frameLength - 8 - 1 - 12)];
    in.readFully(rest);
    body.add(rest);
    return type;
  }

  private static long streamId(int key, long address) {
    return ((long) key << 32) | (address & 0xFFFFFFFFL);
  }

  @Test
  void craftedReadsAreRefusedWithReasons() throws Exception {
    int key = region.key();
    Object[][] cases = {
        {streamId(key ^ 1, 0), 10, "names no registered region"},
        {streamId(0, 0), 10, "names no registered region"},
        {streamId(key, 0), 0, "outside region"},
        {streamId(key, 0), -1, "outside region"},
        {streamId(key, 0), Integer.MIN_VALUE, "outside region"},
        {streamId(key, 0), Integer.MAX_VALUE, "outside region"},
        {streamId(key, 65535), 2, "outside region"},
        {streamId(key, 0xFFFFFFFFL), Integer.MAX_VALUE, "outside region"},
        {streamId(key, 0xFFFFFFF0L), 100, "outside region"},
    };
    try (Socket s = raw()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      for (Object[] c : cases) {
        sendRead(out, (Long) c[0], (Integer) c[1]);
        List<byte[]> body = new ArrayList<>();
        assertEquals(CHUNK_FETCH_FAILURE, readResponse(in, body), Arrays.toString(c));
        String error = new String(body.get(0), StandardCharsets.UTF_8);
        assertTrue(error.contains((String) c[2]), error);
      }
      // The same connection still serves a valid read, byte-exact.
      sendRead(out, streamId(key, 100), 50);
      List<byte[]> body = new ArrayList<>();
      assertEquals(CHUNK_FETCH_SUCCESS, readResponse(in, body));
      assertArrayEquals(Arrays.copyOfRange(content, 100, 150), body.get(0));
    }
    assertEquals(cases.length, server.stats().readsRefused.get());
    assertServerStillServes();
  }

  @Test
  void fuzzRandomFramesNeverServeAndNeverStopTheServer() throws Exception {
    Random rnd = new Random(7);
    int inputs = 0;
    long servedBytesBefore = server.stats().bytesServed.get();
    int checks = 0;
    for (int conn = 0; conn < 200; conn++) {
      try (Socket s = raw()) {
        OutputStream out = s.getOutputStream();
        for (int f = 0; f < 50; f++) {
          byte[] frame = new byte[1 + rnd.nextInt(64)];
          rnd.nextBytes(frame);
          if (rnd.nextBoolean() && frame.length >= 9) {
            // A plausible header: small length, a real message type, random body.
            long len = 9 + rnd.nextInt(40);
            for (int i = 0; i < 8; i++) {
              frame[i] = (byte) (len >>> (56 - 8 * i));
            }
            frame[8] = (byte) rnd.nextInt(16);
          }
          try {
            out.write(frame);
            out.flush();
          } catch (IOException closedByServer) {
            break; // the server dropped this garbage connection: fine
          }
          inputs++;
        }
      }
      if (conn % 20 == 19) {
        assertServerStillServes();
        checks++;
      }
    }
    assertServerStillServes();
    checks++;
    // Whatever the garbage decoded to, no bytes of the region left except to the real client.
    long fuzzServed = server.stats().bytesServed.get() - servedBytesBefore;
    assertEquals(checks * 5000L, fuzzServed, "only the well-behaved reads may be served");
    System.out.println("[fuzz] random frames sent: " + inputs);
    assertTrue(inputs >= 1000, "fuzz run too small: " + inputs);
  }

  @Test
  void tricklingPeerDoesNotBlockOthers() throws Exception {
    try (Socket s = raw()) {
      OutputStream out = s.getOutputStream();
      byte[] frame = new byte[21];
      frame[7] = 21; // a valid length, then the rest one byte at a time
      for (int i = 0; i < 12; i++) {
        out.write(frame[i]);
        out.flush();
        assertServerStillServes();
        Thread.sleep(100);
      }
    }
  }

  @Test
  void aThousandIdleConnectionsDoNotStopService() throws Exception {
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 1000; i++) {
        idle.add(raw());
      }
      assertServerStillServes();
    } finally {
      for (Socket s : idle) {
        s.close();
      }
    }
    assertServerStillServes();
  }
}
