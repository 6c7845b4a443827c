/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
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

import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tcp server against hostile peers on raw sockets: crafted reads with bad keys, offsets
 * and lengths, a fuzzer (reads mutated from valid ones for live regions, and random frames;
 * fixed counts, logged seed, replayable with -Drdma.fuzz.seed), a peer that trickles one byte
 * at a time, and a thousand idle connections. Regions hold a position-dependent pattern, so
 * every answer is checked: a refusal, or exactly the region's bytes at that offset; nothing
 * outside a registered region is ever served, and a well-behaved client keeps reading
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
    content = patternFile(9, 64 * 1024);
    region = server.register(TestFiles.mapFile(dir, content));
    live.put(region.key(), new int[] {9, content.length});
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  /** A well-behaved read through the real client must still return the right bytes. */
  private void assertServerStillServes() throws Exception {
    TransportChannel ch = client.connect(server.localAddress());
    ReadResult r = new ReadResult();
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

  // ---- the fuzzer ----

  /** Seed of the fuzz runs: fixed for CI, overridable to replay or explore (logged). */
  private static long fuzzSeed() {
    return Long.getLong("rdma.fuzz.seed", 0x5eed_2026L);
  }

  /** The byte at {@code position} of pattern file {@code file}: position-dependent, no period. */
  static byte pattern(int file, long position) {
    long x = (position + 1) * 0x9E3779B97F4A7C15L + file * 0xC2B2AE3D27D4EB4FL;
    x ^= x >>> 29;
    x *= 0xBF58476D1CE4E5B9L;
    return (byte) (x ^ (x >>> 32));
  }

  private static byte[] patternFile(int file, int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = pattern(file, i);
    }
    return b;
  }

  /** Live regions of the fuzz run: key to (file number, length). */
  private final java.util.Map<Integer, int[]> live = new java.util.HashMap<>();

  private void registerPatternRegions() throws IOException {
    int[] sizes = {1, 777, 4096, 65536 + 13};
    for (int f = 0; f < sizes.length; f++) {
      RegisteredRegion r = server.register(TestFiles.mapFile(dir, patternFile(f, sizes[f])));
      live.put(r.key(), new int[] {f, sizes[f]});
    }
  }

  /** Outcome counts of one fuzz run, by kind of input. */
  private final java.util.Map<String, int[]> outcomes = new java.util.TreeMap<>();

  /**
   * Checks one response frame (type byte onwards): a refusal, or exactly the region's bytes
   * at that offset for a read that lies inside a live region. Returns the bytes served.
   */
  private long checkResponse(byte[] frame, String kind) {
    byte type = frame[0];
    int[] counts = outcomes.computeIfAbsent(kind, k -> new int[2]);
    if (type != CHUNK_FETCH_SUCCESS) {
      counts[1]++;
      return 0;
    }
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(frame, 1, frame.length - 1);
    long streamId = b.getLong();
    int length = b.getInt();
    int key = (int) (streamId >>> 32);
    long address = streamId & 0xFFFFFFFFL;
    int[] region = live.get(key);
    assertTrue(region != null, kind + ": served a read for key " + key + " that names no region");
    assertTrue(length > 0 && address + length <= region[1], kind + ": served [" + address + ", "
        + (address + length) + ") outside a region of " + region[1] + " bytes");
    assertEquals(length, b.remaining(), kind + ": served a wrong number of bytes");
    for (int i = 0; i < length; i++) {
      if (b.get() != pattern(region[0], address + i)) {
        throw new AssertionError(kind + ": byte " + (address + i) + " of region " + key
            + " is not the file's byte");
      }
    }
    counts[0]++;
    return length;
  }

  /** Reads one whole response frame: its bytes from the type on. */
  private static byte[] readFrame(DataInputStream in) throws IOException {
    long frameLength = in.readLong();
    assertTrue(frameLength >= 9 && frameLength < (1 << 24), "frame length " + frameLength);
    byte[] frame = new byte[(int) (frameLength - 8)];
    in.readFully(frame);
    return frame;
  }

  /** A read derived from a live one: the right key, a nearby key, bounds, overflows. */
  private static Object[] mutatedRead(Random rnd, int key, int regionLength) {
    switch (rnd.nextInt(7)) {
      case 0: { // valid
        int len = 1 + rnd.nextInt(regionLength);
        return new Object[] {"valid", streamId(key, rnd.nextInt(regionLength - len + 1)), len};
      }
      case 1: { // offset around the end, length around what is left
        long off = Math.max(0, regionLength - 8 + rnd.nextInt(17));
        int len = (int) (regionLength - off) - 4 + rnd.nextInt(9);
        return new Object[] {"bounds-end", streamId(key, off), len};
      }
      case 2: { // offset around 0, length around the whole region
        long off = rnd.nextInt(3);
        int len = regionLength - 2 + rnd.nextInt(5);
        return new Object[] {"bounds-start", streamId(key, off), len};
      }
      case 3: { // address + length overflows 32 bits or int
        long off = 0xFFFFFFFFL - rnd.nextInt(1 << 16);
        int len = rnd.nextBoolean() ? Integer.MAX_VALUE - rnd.nextInt(1 << 16)
            : 1 + rnd.nextInt(1 << 17);
        return new Object[] {"overflow", streamId(key, off), len};
      }
      case 4: { // non-positive or huge lengths at valid offsets
        int[] lens = {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, -regionLength};
        return new Object[] {"length", streamId(key, rnd.nextInt(regionLength)),
            lens[rnd.nextInt(lens.length)]};
      }
      case 5: { // a key one bit or one away from the live one, otherwise valid
        int near = rnd.nextBoolean() ? key ^ (1 << rnd.nextInt(32)) : key + (rnd.nextBoolean() ? 1 : -1);
        return new Object[] {"near-key", streamId(near, 0), 1 + rnd.nextInt(regionLength)};
      }
      default: // random ids
        return new Object[] {"random", rnd.nextLong(), rnd.nextInt()};
    }
  }

  @Test
  void fuzzMutatedReadsGetRefusalsOrExactBytes() throws Exception {
    registerPatternRegions();
    long seed = fuzzSeed();
    System.out.println("[fuzz] mutated reads: seed " + seed + " (replay: -Drdma.fuzz.seed="
        + seed + ")");
    Random rnd = new Random(seed);
    List<Integer> keys = new ArrayList<>(live.keySet());
    java.util.Collections.sort(keys);
    int total = 20_000;
    int pipeline = 32;
    long bytesServedToFuzz = 0;
    long servedBefore = server.stats().bytesServed.get();
    int sent = 0;
    while (sent < total) {
      try (Socket s = raw()) {
        DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(
            s.getOutputStream()));
        DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(
            s.getInputStream()));
        for (int batch = 0; batch < 20 && sent < total; batch++) {
          // Pipelined: a batch of reads, then every answer (in order on one connection).
          List<Object[]> reads = new ArrayList<>();
          for (int i = 0; i < pipeline && sent < total; i++, sent++) {
            int key = keys.get(rnd.nextInt(keys.size()));
            Object[] r = mutatedRead(rnd, key, live.get(key)[1]);
            reads.add(r);
            out.writeLong(8 + 1 + 12);
            out.writeByte(CHUNK_FETCH_REQUEST);
            out.writeLong((Long) r[1]);
            out.writeInt((Integer) r[2]);
          }
          out.flush();
          for (Object[] r : reads) {
            byte[] frame = readFrame(in);
            java.nio.ByteBuffer id = java.nio.ByteBuffer.wrap(frame, 1, 12);
            assertEquals((long) (Long) r[1], id.getLong(), "answers come in order");
            assertEquals((int) (Integer) r[2], id.getInt());
            bytesServedToFuzz += checkResponse(frame, (String) r[0]);
          }
        }
      }
    }
    System.out.println("[fuzz] mutated reads: " + sent + " sent, outcomes [served, refused] "
        + outcomesText());
    assertEquals(total, sent);
    assertEquals(total, outcomes.values().stream().mapToInt(c -> c[0] + c[1]).sum(),
        "every read got an answer");
    assertEquals(bytesServedToFuzz, server.stats().bytesServed.get() - servedBefore,
        "the server served exactly the bytes checked here");
    // Valid reads are served (the run exercises the serving path, not only refusals) and
    // nothing malformed is.
    assertEquals(0, outcomes.get("valid")[1], "a valid read was refused");
    for (String k : List.of("overflow", "length", "near-key", "random")) {
      assertEquals(0, outcomes.getOrDefault(k, new int[2])[0], k + " reads were served");
    }
    assertServerStillServes();
  }

  private String outcomesText() {
    StringBuilder b = new StringBuilder();
    outcomes.forEach((k, v) -> b.append(k).append('=').append(Arrays.toString(v)).append(' '));
    return b.toString().trim();
  }

  @Test
  void fuzzRandomFramesNeverServeAndNeverStopTheServer() throws Exception {
    registerPatternRegions();
    long seed = fuzzSeed() + 1;
    System.out.println("[fuzz] random frames: seed " + seed + " (replay: -Drdma.fuzz.seed="
        + (seed - 1) + ")");
    Random rnd = new Random(seed);
    List<Integer> keys = new ArrayList<>(live.keySet());
    java.util.Collections.sort(keys);
    int inputs = 0;
    int answers = 0;
    long servedBytesBefore = server.stats().bytesServed.get();
    long servedToFuzz = 0;
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
            if (frame[8] == CHUNK_FETCH_REQUEST && frame.length >= 13 && rnd.nextBoolean()) {
              // ... sometimes naming a live key, so the frame may decode into a real read.
              int key = keys.get(rnd.nextInt(keys.size()));
              for (int i = 0; i < 4; i++) {
                frame[9 + i] = (byte) (key >>> (24 - 8 * i));
              }
            }
          }
          try {
            out.write(frame);
            out.flush();
          } catch (IOException closedByServer) {
            break; // the server dropped this garbage connection: fine
          }
          inputs++;
        }
        // Read every answer until the server closes the connection (or stays silent).
        try {
          s.shutdownOutput();
          s.setSoTimeout(2000);
          DataInputStream in = new DataInputStream(s.getInputStream());
          while (true) {
            long frameLength = in.readLong();
            if (frameLength < 9 || frameLength > (1 << 24)) {
              throw new AssertionError("malformed answer frame length " + frameLength);
            }
            byte[] answer = new byte[(int) (frameLength - 8)];
            in.readFully(answer);
            answers++;
            servedToFuzz += checkResponse(answer, "random-frame");
          }
        } catch (java.io.EOFException | java.net.SocketException | java.net.SocketTimeoutException end) {
          // closed by the server, reset, or nothing more to say
        }
      }
      if (conn % 20 == 19) {
        assertServerStillServes();
        checks++;
      }
    }
    assertServerStillServes();
    checks++;
    long fuzzServed = server.stats().bytesServed.get() - servedBytesBefore;
    assertEquals(checks * 5000L + servedToFuzz, fuzzServed,
        "only the well-behaved reads and the reads checked here may be served");
    System.out.println("[fuzz] random frames: " + inputs + " sent over 200 connections, "
        + answers + " answers read, outcomes [served, refused] " + outcomesText());
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

  /** Idle connections from another loopback address (the per-address limit applies there). */
  @Test
  void aThousandIdleConnectionsDoNotStopService() throws Exception {
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 1000; i++) {
        Socket s = new Socket();
        idle.add(s);
        s.bind(new InetSocketAddress(java.net.InetAddress.getByName("127.0.0.2"), 0));
        s.connect(new InetSocketAddress(server.localAddress().host(),
            server.localAddress().port()), 5000);
      }
      assertServerStillServes();
      // All but maxConnectionsPerAddress (default 64) of them were closed by the server.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.guard().connectionsRefused.get() < 1000 - 64) {
        assertTrue(System.nanoTime() < deadline,
            "refused: " + server.guard().connectionsRefused.get());
        Thread.sleep(10);
      }
      assertEquals(1000 - 64, server.guard().connectionsRefused.get());
    } finally {
      for (Socket s : idle) {
        s.close();
      }
    }
    assertServerStillServes();
  }
}
