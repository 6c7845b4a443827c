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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tcp server against hostile peers on raw sockets: crafted reads with bad keys, offsets
 * and lengths, a fuzzer (batches of reads mutated from valid ones for several live regions,
 * random frames, and handshake frames on an authenticated server; fixed counts, logged seed,
 * replayable with -Drdma.fuzz.seed), a peer that trickles one byte at a time, and a thousand
 * idle connections. Regions hold position-dependent patterns, each its own, and some are
 * registered from their file with an offset (several regions of one file, read by sendfile
 * from 64 KiB), so every served byte is checked against the file it must come from: serving
 * one key's bytes for another, or a byte outside a region, fails the run.
 */
class TcpHostileInputTest {
  private static final byte CHUNK_FETCH_REQUEST = 0;
  private static final byte CHUNK_FETCH_SUCCESS = 1;
  private static final byte RPC_FAILURE = 5;

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
    live.put(region.key(), new Live(region, 9, 0, content.length));
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
    ch.read(List.of(new ReadRequest(region.address() + 1000, region.key(), 5000, r, null)));
    assertArrayEquals(Arrays.copyOfRange(content, 1000, 6000), r.future.get(30, TimeUnit.SECONDS));
  }

  private Socket raw() throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(server.localAddress().host(), server.localAddress().port()),
        5000);
    s.setSoTimeout(10_000);
    return s;
  }

  /** One read of a batch as sent on the wire, with the kind of input it is. */
  private static final class Read {
    final String kind;
    final int key;
    final long address;
    final int length;

    Read(String kind, int key, long address, int length) {
      this.kind = kind;
      this.key = key;
      this.address = address;
      this.length = length;
    }

    long asked() {
      return Math.max(0, length);
    }
  }

  /** Sends one batch (an RpcRequest frame) of {@code reads}. */
  private static void sendBatch(DataOutputStream out, long batchId, List<Read> reads)
      throws IOException {
    ByteBuffer b = ByteBuffer.allocate(13 + 16 * reads.size());
    b.put((byte) 'B').putLong(batchId).putInt(reads.size());
    for (Read r : reads) {
      b.putInt(r.key).putLong(r.address).putInt(r.length);
    }
    TcpAuthenticationTest.rpc(out, batchId, b.array());
  }

  /** Reads one whole answer frame: its bytes from the type on. */
  private static byte[] readFrame(DataInputStream in) throws IOException {
    long frameLength = in.readLong();
    assertTrue(frameLength >= 9 && frameLength < (1 << 26), "frame length " + frameLength);
    byte[] frame = new byte[(int) (frameLength - 8)];
    in.readFully(frame);
    return frame;
  }

  /**
   * Checks a batch's answer (frame bytes from the type on) read by read: a refusal (with the
   * one uniform text for reads of no live bytes), or exactly the file's bytes for a read
   * inside a live region. Counts outcomes per kind; returns the bytes served.
   */
  private long checkBatchAnswer(byte[] frame, long batchId, List<Read> reads) {
    ByteBuffer b = ByteBuffer.wrap(frame);
    assertEquals(CHUNK_FETCH_SUCCESS, b.get(), "batch " + batchId + " answered");
    assertEquals(batchId, b.getLong());
    assertEquals(0, b.getInt());
    assertEquals(reads.size(), b.getInt());
    int[] status = new int[reads.size()];
    for (int i = 0; i < status.length; i++) {
      status[i] = b.getInt();
      if (status[i] == ReadBatch.REFUSED) {
        byte[] why = new byte[b.getShort()];
        b.get(why);
        assertEquals(Refusal.NO_SUCH_BYTES, new String(why, StandardCharsets.UTF_8),
            reads.get(i).kind + ": every refusal reads the same");
      }
    }
    long served = 0;
    for (int i = 0; i < status.length; i++) {
      Read r = reads.get(i);
      Live l = live.get(r.key);
      long off = l == null ? -1 : r.address - l.region.address();
      boolean inside = l != null && off >= 0 && r.length > 0 && off + r.length <= l.length;
      int[] counts = outcomes.computeIfAbsent(r.kind, k -> new int[2]);
      if (status[i] == ReadBatch.REFUSED) {
        assertTrue(!inside, r.kind + ": a read inside a live region was refused");
        counts[1]++;
        continue;
      }
      assertTrue(inside, r.kind + ": served [" + off + ", +" + r.length + ") of key " + r.key
          + ", which is not inside a live region");
      assertEquals(r.length, status[i], r.kind + ": served a wrong number of bytes");
      for (int k = 0; k < r.length; k++) {
        if (b.get() != pattern(l.file, l.fileOffset + off + k)) {
          throw new AssertionError(r.kind + ": byte " + (off + k) + " of region " + r.key
              + " is not its file's byte");
        }
      }
      counts[0]++;
      served += r.length;
    }
    assertEquals(0, b.remaining(), "no byte beyond the served reads");
    return served;
  }

  @Test
  void craftedReadsAreRefusedAlike() throws Exception {
    int key = region.key();
    long a = region.address();
    List<Read> cases = List.of(
        new Read("other key", key ^ 1, a, 10),
        new Read("key 0", 0, a, 10),
        new Read("key 0, address 0", 0, 0, 10),
        new Read("length 0", key, a, 0),
        new Read("length -1", key, a, -1),
        new Read("length MIN", key, a, Integer.MIN_VALUE),
        new Read("at the end + 1", key, a + 65535, 2),
        new Read("offset 2^32 - 1", key, a + 0xFFFFFFFFL, 100),
        new Read("offset 2^32 - 16", key, a + 0xFFFFFFF0L, 100),
        new Read("upper half one bit off", key, a ^ (1L << 40), 10),
        new Read("offset only (no upper half)", key, 100, 10),
        new Read("negative address", key, -1L, 10));
    try (Socket s = raw()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      sendBatch(out, 1, cases);
      out.flush();
      assertEquals(0, checkBatchAnswer(readFrame(in), 1, cases));
      assertEquals(cases.size(), outcomes.values().stream().mapToInt(c -> c[1]).sum(),
          "all refused");
      // The same connection still serves a valid read, byte-exact.
      List<Read> ok = List.of(new Read("valid", key, a + 100, 50));
      sendBatch(out, 2, ok);
      out.flush();
      assertEquals(50, checkBatchAnswer(readFrame(in), 2, ok));
    }
    assertEquals(cases.size(), server.stats().readsRefused.get());
    // A single read (network-common's ChunkFetchRequest) is not served: the connection closes.
    try (Socket s = raw()) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeLong(8 + 1 + 12);
      out.writeByte(CHUNK_FETCH_REQUEST);
      out.writeLong(((long) key << 32) | 100);
      out.writeInt(50);
      out.flush();
      assertEquals(-1, s.getInputStream().read(), "closed without an answer");
    }
    assertEquals(1, server.guard().framesRefused.get());
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

  /** A live region of the fuzz run: its pattern file, where it starts in it, its length. */
  private static final class Live {
    final RegisteredRegion region;
    final int file;
    final long fileOffset;
    final int length;

    Live(RegisteredRegion region, int file, long fileOffset, int length) {
      this.region = region;
      this.file = file;
      this.fileOffset = fileOffset;
      this.length = length;
    }
  }

  /** Live regions of the fuzz run, by key. */
  private final java.util.Map<Integer, Live> live = new java.util.HashMap<>();

  /**
   * Regions of several kinds, each with its own pattern: small mapped ones, and one file of
   * three 96 KiB regions registered from the file at their offsets, as the plugin registers a
   * large map output (reads of 64 KiB and more from them go by sendfile from the file).
   */
  private void registerPatternRegions() throws Exception {
    int[] sizes = {1, 777, 4096, 65536 + 13};
    for (int f = 0; f < sizes.length; f++) {
      RegisteredRegion r = server.register(TestFiles.mapFile(dir, patternFile(f, sizes[f])));
      live.put(r.key(), new Live(r, f, 0, sizes[f]));
    }
    int part = 96 << 10;
    File file = new File(dir, "multi-region.data");
    Files.write(file.toPath(), patternFile(20, 3 * part));
    try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
      for (int i = 0; i < 3; i++) {
        RegisteredRegion r = server.register(ch.map(FileChannel.MapMode.READ_ONLY,
            (long) i * part, part), BackingCheck.NONE, FileChannel.MapMode.READ_ONLY,
            new MappedFileSource(file, (long) i * part));
        live.put(r.key(), new Live(r, 20, (long) i * part, part));
      }
    }
  }

  /** Outcome counts of one fuzz run, by kind of input: [served, refused]. */
  private final java.util.Map<String, int[]> outcomes = new java.util.TreeMap<>();

  /** A read derived from a live one: the right key, a nearby key, bounds, overflows. */
  private static Read mutatedRead(Random rnd, Live l) {
    int key = l.region.key();
    long a = l.region.address();
    int n = l.length;
    switch (rnd.nextInt(8)) {
      case 0: { // valid
        int len = 1 + rnd.nextInt(n);
        return new Read("valid", key, a + rnd.nextInt(n - len + 1), len);
      }
      case 1: { // offset around the end, length around what is left
        long off = Math.max(0, n - 8 + rnd.nextInt(17));
        int len = (int) (n - off) - 4 + rnd.nextInt(9);
        return new Read("bounds-end", key, a + off, len);
      }
      case 2: { // offset around 0, length around the whole region
        return new Read("bounds-start", key, a + rnd.nextInt(3), n - 2 + rnd.nextInt(5));
      }
      case 3: { // offset + length overflows 32 bits; or below the region's base
        long off = rnd.nextBoolean() ? 0xFFFFFFFFL - rnd.nextInt(1 << 16) : -1 - rnd.nextInt(64);
        return new Read("overflow", key, a + off, 1 + rnd.nextInt(1 << 12));
      }
      case 4: { // non-positive lengths at valid offsets
        int[] lens = {0, -1, Integer.MIN_VALUE, -n};
        return new Read("length", key, a + rnd.nextInt(n), lens[rnd.nextInt(lens.length)]);
      }
      case 5: { // a key one bit or one away from the live one, otherwise valid
        int near = rnd.nextBoolean() ? key ^ (1 << rnd.nextInt(32))
            : key + (rnd.nextBoolean() ? 1 : -1);
        return new Read("near-key", near, a, 1 + rnd.nextInt(n));
      }
      case 6: { // the right key with another region's (or a nearby) upper half
        long upper = a ^ (1L << (32 + rnd.nextInt(31)));
        return new Read("near-address", key, upper + rnd.nextInt(n), 1);
      }
      default: // random
        return new Read("random", rnd.nextInt(), rnd.nextLong() & Long.MAX_VALUE,
            1 + rnd.nextInt(1 << 12));
    }
  }

  /**
   * 20,000 reads mutated from valid ones for 8 live regions (of 5 pattern files, 3 of them
   * regions of one file at file offsets), in batches of 1 to 64, several batches pipelined
   * per connection: every read is answered inside its batch's answer, served byte-exact
   * (from the right file at the right offset) exactly when it lies inside a live region,
   * else refused with the one uniform text. Batches asking for more than a batch may are
   * refused whole and close their connection (counted apart).
   */
  @Test
  void fuzzMutatedBatchesGetRefusalsOrExactBytes() throws Exception {
    registerPatternRegions();
    long seed = fuzzSeed();
    System.out.println("[fuzz] mutated batches: seed " + seed + " (replay: -Drdma.fuzz.seed="
        + seed + ")");
    Random rnd = new Random(seed);
    List<Integer> keys = new ArrayList<>(live.keySet());
    java.util.Collections.sort(keys);
    int total = 20_000;
    long bytesServedToFuzz = 0;
    long servedBefore = server.stats().bytesServed.get();
    long sendfileBefore = server.stats().bytesServed.get();
    int sent = 0;
    long batchId = 0;
    while (sent < total) {
      try (Socket s = raw()) {
        DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(
            s.getOutputStream()));
        DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(
            s.getInputStream()));
        for (int round = 0; round < 25 && sent < total; round++) {
          // Pipelined: a few batches, then their answers (in order on one connection).
          List<List<Read>> batches = new ArrayList<>();
          for (int b = 0; b < 4 && sent < total; b++) {
            int n = 1 + rnd.nextInt(64);
            List<Read> reads = new ArrayList<>();
            long asked = 0;
            while (reads.size() < n && sent < total) {
              Read r = mutatedRead(rnd, live.get(keys.get(rnd.nextInt(keys.size()))));
              if (!reads.isEmpty() && asked + r.asked() > ReadBatch.TARGET_BYTES) {
                break; // a batch of several reads may ask for TARGET_BYTES at most
              }
              reads.add(r);
              asked += r.asked();
              sent++;
            }
            batches.add(reads);
            sendBatch(out, ++batchId, reads);
          }
          out.flush();
          long first = batchId - batches.size() + 1;
          for (int b = 0; b < batches.size(); b++) {
            bytesServedToFuzz += checkBatchAnswer(readFrame(in), first + b, batches.get(b));
          }
        }
      }
    }
    System.out.println("[fuzz] mutated batches: " + sent + " reads in " + batchId
        + " batches, outcomes [served, refused] " + outcomesText());
    assertEquals(total, outcomes.values().stream().mapToInt(c -> c[0] + c[1]).sum(),
        "every read got an answer");
    assertEquals(bytesServedToFuzz, server.stats().bytesServed.get() - servedBefore,
        "the server served exactly the bytes checked here");
    // Valid reads are served (the run exercises the serving paths, not only refusals) and
    // nothing malformed is.
    assertEquals(0, outcomes.get("valid")[1], "a valid read was refused");
    assertTrue(outcomes.get("valid")[0] > 1000, "valid reads served");
    for (String k : List.of("overflow", "length", "near-key", "near-address", "random")) {
      assertEquals(0, outcomes.getOrDefault(k, new int[2])[0], k + " reads were served");
    }
    assertServerStillServes();
  }

  private String outcomesText() {
    StringBuilder b = new StringBuilder();
    outcomes.forEach((k, v) -> b.append(k).append('=').append(Arrays.toString(v)).append(' '));
    return b.toString().trim();
  }

  /**
   * Random frames, half with a plausible header (a small length, a real message type, and
   * for batches sometimes a live key): nothing is served (no frame can name a live region's
   * 63-bit capability by chance), the server drops the garbage connections, and a
   * well-behaved client reads correct bytes every 20 connections.
   */
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
            if (frame[8] == 3 && frame.length >= 39 && rnd.nextBoolean()) {
              // ... sometimes a batch of one read naming a live key with a random address.
              frame[21] = 'B';
              int key = keys.get(rnd.nextInt(keys.size()));
              for (int i = 0; i < 4; i++) {
                frame[34 + i] = (byte) (key >>> (24 - 8 * i));
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
            byte[] answer = readFrame(in);
            answers++;
            assertTrue(answer[0] != CHUNK_FETCH_SUCCESS, "a random frame was served");
          }
        } catch (java.io.EOFException | java.net.SocketException
            | java.net.SocketTimeoutException end) {
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
    assertEquals(checks * 5000L, server.stats().bytesServed.get() - servedBytesBefore,
        "only the well-behaved reads were served");
    System.out.println("[fuzz] random frames: " + inputs + " sent over 200 connections, "
        + answers + " answers read, " + server.guard().framesRefused.get()
        + " connections closed by the frame checks");
    assertTrue(inputs >= 1000, "fuzz run too small: " + inputs);
  }

  /**
   * The pre-authentication decoders on a server with spark.authenticate (SASL, and the auth
   * engine): handshake messages whose declared lengths (app id, SASL body, salt, ciphertext)
   * are random, huge (up to 2 GiB), negative or just past the frame, behind valid headers,
   * one connection each. None is served or answered with data; every connection ends;
   * Spark's decoders never see a length the frame does not hold (heap stays flat, measured
   * apart in TcpPreAuthAllocationTest); an authenticated client keeps reading.
   */
  @Test
  void fuzzHandshakeFramesOnAnAuthenticatedServer() throws Exception {
    for (boolean authEngine : new boolean[] {false, true}) {
      SparkConf conf = new SparkConf(false)
          .set("spark.network.crypto.enabled", String.valueOf(authEngine))
          .set(RdmaConf.TCP_HANDSHAKE_TIMEOUT().key(), "500ms");
      try (TcpTransport authServer = TcpTestSupport.transport(conf, "s3cret");
           TcpTransport authClient = TcpTestSupport.transport(conf, "s3cret")) {
        RegisteredRegion r = authServer.register(TestFiles.mapFile(dir, content));
        Random rnd = new Random(fuzzSeed() + (authEngine ? 3 : 2));
        int frames = 300;
        int dataAnswers = 0;
        for (int i = 0; i < frames; i++) {
          ByteBuffer body = ByteBuffer.allocate(1 + rnd.nextInt(200));
          body.put(authEngine ? (byte) 0xFB : (byte) 0xEA);
          if (i % 50 == 0) {
            // Every 50th well-formed (random content, right lengths): it reaches Spark's
            // auth handler, which must fail it.
            body = ByteBuffer.wrap(authEngine ? TcpAuthenticationTest.authEngineHello(
                "app-test", i) : TcpAuthenticationTest.saslHello("app-" + i));
            body.position(body.limit());
          }
          while (body.remaining() >= 4) {
            int kind = rnd.nextInt(4);
            int declared = kind == 0 ? 0x7FFFFFF0 - rnd.nextInt(1 << 20)
                : kind == 1 ? -1 - rnd.nextInt(1 << 20)
                : kind == 2 ? body.remaining() - 4 + 1 + rnd.nextInt(8)
                : rnd.nextInt(Math.max(1, body.remaining() - 4));
            body.putInt(declared);
            int skip = Math.min(body.remaining(), Math.max(0, rnd.nextInt(16)));
            body.position(body.position() + skip);
          }
          try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(authServer.localAddress().host(),
                authServer.localAddress().port()), 5000);
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            TcpAuthenticationTest.rpc(out, 1, body.array());
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            try {
              while (true) {
                if (readFrame(in)[0] == CHUNK_FETCH_SUCCESS) {
                  dataAnswers++;
                }
              }
            } catch (java.io.EOFException | java.net.SocketException end) {
              // closed: every such connection must end (a timeout fails the test)
            }
          }
        }
        ConnectionGuard g = authServer.guard();
        TcpTestSupport.await(() -> g.framesRefused.get() + g.handshakesFailed.get()
            + g.handshakesTimedOut.get(), frames);
        ReadResult ok = new ReadResult();
        authClient.connect(authServer.localAddress()).read(List.of(
            new ReadRequest(r.address() + 10, r.key(), 100, ok, null)));
        assertArrayEquals(Arrays.copyOfRange(content, 10, 110), ok.future.get(30,
            TimeUnit.SECONDS));
        System.out.println("[fuzz] handshake frames (" + (authEngine ? "auth engine" : "SASL")
            + "): " + frames + " sent, " + authServer.guard().framesRefused.get()
            + " refused by the frame checks, " + authServer.guard().handshakesFailed.get()
            + " failed handshakes, " + authServer.guard().handshakesTimedOut.get()
            + " unfinished handshakes closed at the deadline, " + dataAnswers
            + " data answers");
        assertEquals(0, dataAnswers);
        assertEquals(100, authServer.stats().bytesServed.get(), "only the client's read");
        assertEquals(frames, authServer.guard().framesRefused.get()
            + authServer.guard().handshakesFailed.get()
            + authServer.guard().handshakesTimedOut.get(), "every handshake frame ended badly");
        assertTrue(authServer.guard().handshakesFailed.get()
            + authServer.guard().handshakesTimedOut.get() >= frames / 50,
            "the well-formed ones reached Spark's auth handler");
      }
    }
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
