/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.TransportFactory;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsClassNames;

/**
 * End-to-end test of the verbs transport on a real (or Soft-RoCE) device, in two JVMs that
 * coordinate through files in a shared directory:
 * <pre>
 *   java -cp 'lib/*' ...VerbsSelfTest server &lt;ip&gt; &lt;port&gt; &lt;dir&gt;
 *   java -cp 'lib/*' ...VerbsSelfTest client &lt;ip&gt; &lt;dir&gt;
 *   java -cp 'lib/*' ...VerbsSelfTest intruder &lt;ip&gt; &lt;dir&gt;
 * </pre>
 * The server runs two transports (two "peers") serving mmapped files; the client reads
 * many sizes and offsets byte-exact, reads a region four times its receive pool in pieces,
 * checks that a wrong rkey and an out-of-bounds READ fail with IBV_WC_REM_ACCESS_ERR while the
 * other peer's channel keeps working and a reconnect works, that one bad key in a batch fails
 * exactly that read while the others to the same peer complete on a fresh connection, and that a region deregistered and registered again is refused under its old key
 * and readable under its new one. A second client transport with
 * spark.shuffle.rdma.verbs.queuePairsPerPeer=2 repeats the byte-exact reads and the bad-key
 * case over two queue pairs per peer. Both print the negotiated RDMA READ depth. Exit status
 * 0 on success.
 *
 * <p>With {@code VERBS_SELFTEST_SECRET} set, every transport runs with spark.authenticate and
 * that secret, so the client's connections are authenticated in the RDMA-CM private data.
 * The intruder (run with another secret, before the client) must be refused every
 * connection, read nothing, and see the server's {@code connectionsRejected} count exactly
 * its attempts; if it ever connects it tries to read and exits 1. Its attempts on the first
 * server transport are 3 plus a flood of {@code VERBS_SELFTEST_FLOOD} (default 100) connect
 * requests; the client that runs after it must still be accepted.
 */
public final class VerbsSelfTest {
  static final int SIZE_A = 64 << 20;
  static final int SIZE_B = 8 << 20;
  /** The client's receive pool: smaller than SIZE_A, so reading all of it needs pieces. */
  static final int CLIENT_POOL = 16 << 20;

  private VerbsSelfTest() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("server")) {
      server(args[1], Integer.parseInt(args[2]), Paths.get(args[3]));
    } else if (args.length == 3 && args[0].equals("client")) {
      client(args[1], Paths.get(args[2]));
      System.out.println("VerbsSelfTest: PASS");
    } else if (args.length == 3 && args[0].equals("intruder")) {
      intruder(args[1], Paths.get(args[2]));
      System.out.println("VerbsSelfTest intruder: refused as expected: PASS");
    } else {
      System.err.println("usage: VerbsSelfTest server <ip> <port> <dir> | client <ip> <dir> | "
          + "intruder <ip> <dir>");
      System.exit(2);
    }
    System.exit(0);
  }

  /**
   * Turns on the debug lines that show each connection's READ depths as offered, granted
   * and reported by the RDMA-CM event, on both sides (through log4j2, Spark's logging, if
   * present; looked up by name so the test does not depend on it). Called once a transport
   * exists: Spark configures its logging when the first one is made, resetting levels.
   */
  static void logReadDepths() {
    try {
      Class<?> level = Class.forName("org.apache.logging.log4j.Level");
      java.lang.reflect.Method setLevel = Class.forName(
          "org.apache.logging.log4j.core.config.Configurator")
          .getMethod("setLevel", String.class, level);
      Object debug = level.getField("DEBUG").get(null);
      for (String logger : new String[] {VerbsClassNames.OUTBOUND_CONNECTION,
          VerbsClassNames.ACCEPTOR}) {
        setLevel.invoke(null, logger, debug);
      }
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      System.out.println("(no READ depth debug lines: " + e + ")");
    }
  }

  /** The byte at position i of every test file. */
  static byte expected(long i) {
    return (byte) ((i ^ (i >>> 8) ^ (i >>> 17)) * 0x9E + 1);
  }

  static ShuffleTransport transport(String ip, int port) throws IOException {
    return transport(ip, port, 0);
  }

  /** {@code queuePairs}: spark.shuffle.rdma.verbs.queuePairsPerPeer (0: from the device). */
  static ShuffleTransport transport(String ip, int port, int queuePairs) throws IOException {
    SparkConf conf = new SparkConf(false)
        .set("spark.shuffle.rdma.verbs.queuePairsPerPeer", Integer.toString(queuePairs))
        .set("spark.shuffle.rdma.transport", "verbs")
        .set("spark.shuffle.rdma.bindAddress", ip)
        .set("spark.shuffle.rdma.port", Integer.toString(port))
        .set("spark.shuffle.rdma.verbs.receivePoolSize", port == 0 ? (CLIENT_POOL >> 20) + "m" : "64m")
        .set("spark.shuffle.rdma.readTimeout", "20s")
        // VERBS_SELFTEST_POOL_WAIT: e.g. 10min to see heldPool fail as before poolWait existed.
        .set(RdmaConf.VERBS_POOL_WAIT().key(),
            System.getenv().getOrDefault("VERBS_SELFTEST_POOL_WAIT", "250ms"));
    String dev = System.getenv("RDMA_DEVICE");
    if (dev != null && !dev.isEmpty()) {
      conf.set("spark.shuffle.rdma.device", dev);
    }
    return TransportFactory.create(new TransportSettings(new RdmaShuffleConf(conf), ip,
        securityManager(conf), "verbs-selftest", 2));
  }

  /** Spark's SecurityManager with spark.authenticate and VERBS_SELFTEST_SECRET, if set. */
  static org.apache.spark.SecurityManager securityManager(SparkConf conf) {
    String secret = System.getenv("VERBS_SELFTEST_SECRET");
    if (secret == null || secret.isEmpty()) {
      return null;
    }
    conf.set("spark.authenticate", "true").set("spark.authenticate.secret", secret);
    return new org.apache.spark.SecurityManager(conf, scala.Option.empty(),
        org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE());
  }

  static void writeFile(Path file, int size) throws IOException {
    byte[] chunk = new byte[1 << 20];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int base = 0; base < size; base += chunk.length) {
        for (int i = 0; i < chunk.length; i++) {
          chunk[i] = expected((long) base + i);
        }
        out.write(chunk, 0, Math.min(chunk.length, size - base));
      }
    }
  }

  /** Nothing may have written to a registered file, whatever the mapping mode. */
  static void checkUnchanged(Path file, int size) throws IOException {
    byte[] chunk = new byte[1 << 20];
    try (InputStream in = Files.newInputStream(file)) {
      for (int base = 0; base < size; base += chunk.length) {
        int n = in.readNBytes(chunk, 0, Math.min(chunk.length, size - base));
        for (int i = 0; i < n; i++) {
          if (chunk[i] != expected((long) base + i)) {
            throw new AssertionError(file + " was modified at byte " + (base + i));
          }
        }
      }
    }
  }

  /**
   * Maps and registers a file the way the Spark layer (MapOutputRegistry) does: with the
   * transport's mode for this kernel, and its fallback if the kernel refuses to pin that.
   */
  static RegisteredRegion registerFile(ShuffleTransport t, Path file, int size)
      throws IOException {
    FileChannel.MapMode mode = t.registrationMapMode();
    try {
      return t.register(map(file, mode, size), BackingCheck.NONE, mode);
    } catch (IOException e) {
      FileChannel.MapMode fallback = t.registrationFallback(mode, e);
      if (fallback == null) {
        throw e;
      }
      System.out.println("map mode " + mode + " refused (" + e.getMessage() + "), falling back to "
          + fallback);
      return t.register(map(file, fallback, size), BackingCheck.NONE, fallback);
    }
  }

  private static MappedByteBuffer map(Path file, FileChannel.MapMode mode, int size)
      throws IOException {
    try (FileChannel ch = mode == FileChannel.MapMode.READ_ONLY
        ? FileChannel.open(file, StandardOpenOption.READ)
        : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return ch.map(mode, 0, size);
    }
  }

  // ---- server ----

  static void server(String ip, int port, Path dir) throws Exception {
    try (ShuffleTransport a = transport(ip, port); ShuffleTransport b = transport(ip, port + 1)) {
      logReadDepths();
      writeFile(dir.resolve("a.bin"), SIZE_A);
      writeFile(dir.resolve("b.bin"), SIZE_B);
      RegisteredRegion ra = registerFile(a, dir.resolve("a.bin"), SIZE_A);
      RegisteredRegion rb = registerFile(a, dir.resolve("b.bin"), SIZE_B);
      RegisteredRegion rc = registerFile(b, dir.resolve("b.bin"), SIZE_B); // second peer
      System.out.println("map mode " + a.registrationMapMode() + " on kernel "
          + System.getProperty("os.version") + ": pinned copied bytes "
          + a.stats().pinnedCopiedBytes.get() + " of " + a.stats().bytesRegistered.get()
          + " registered");
      Properties p = new Properties();
      put(p, "a", a.localAddress(), ra);
      put(p, "b", a.localAddress(), rb);
      put(p, "c", b.localAddress(), rc);
      publish(dir, "server.properties", p);
      reportRejectionsAfterIntruder(dir, a, b);
      waitFor(dir.resolve("cmd-reregister"));
      a.deregister(ra).get(30, TimeUnit.SECONDS);
      RegisteredRegion ra2 = registerFile(a, dir.resolve("a.bin"), SIZE_A);
      Properties p2 = new Properties();
      put(p2, "a", a.localAddress(), ra2);
      publish(dir, "server2.properties", p2);
      waitFor(dir.resolve("cmd-stop"));
      a.deregister(ra2).get(30, TimeUnit.SECONDS);
      a.deregister(rb).get(30, TimeUnit.SECONDS);
      b.deregister(rc).get(30, TimeUnit.SECONDS);
      checkUnchanged(dir.resolve("a.bin"), SIZE_A);
      checkUnchanged(dir.resolve("b.bin"), SIZE_B);
      System.out.println("registered files unchanged: ok");
      System.out.println("VerbsSelfTest server: stopped cleanly, stats " + a.stats().snapshot());
    }
  }

  /**
   * With authentication on: once the intruder is done, publishes how many connection
   * requests each server transport rejected, without holding up the rest of the test.
   */
  private static void reportRejectionsAfterIntruder(Path dir, ShuffleTransport a,
      ShuffleTransport b) {
    if (System.getenv("VERBS_SELFTEST_SECRET") == null) {
      return;
    }
    Thread t = new Thread(() -> {
      try {
        waitFor(dir.resolve("intruder-done"));
        Properties r = new Properties();
        r.setProperty("a.rejected", Long.toString(a.stats().connectionsRejected.get()));
        r.setProperty("c.rejected", Long.toString(b.stats().connectionsRejected.get()));
        publish(dir, "server-rejections.properties", r);
      } catch (Exception e) {
        System.err.println("could not report rejections: " + e);
      }
    }, "report-rejections");
    t.setDaemon(true);
    t.start();
  }

  private static void put(Properties p, String name, PeerAddress at, RegisteredRegion r) {
    p.setProperty(name + ".host", at.host());
    p.setProperty(name + ".port", Integer.toString(at.port()));
    p.setProperty(name + ".address", Long.toString(r.address()));
    p.setProperty(name + ".length", Long.toString(r.length()));
    p.setProperty(name + ".key", Integer.toString(r.key()));
  }

  private static void publish(Path dir, String name, Properties p) throws IOException {
    Path tmp = dir.resolve(name + ".tmp");
    try (OutputStream out = Files.newOutputStream(tmp)) {
      p.store(out, "VerbsSelfTest");
    }
    Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  private static void waitFor(Path file) throws InterruptedException {
    // Generous: under emulation a JVM start and the intruder's flood take minutes.
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out waiting for " + file);
      }
      Thread.sleep(50);
    }
  }

  private static Properties load(Path file) throws Exception {
    waitFor(file);
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    }
    return p;
  }

  // ---- intruder ----

  /**
   * A reader with the wrong secret (VERBS_SELFTEST_SECRET differs from the server's): every
   * connection attempt must be rejected by the server, nothing read, and the server's
   * rejection counters must equal the attempts. Should a connection succeed, it reads with
   * the published key to show what leaked, and fails.
   */
  static void intruder(String ip, Path dir) throws Exception {
    check(System.getenv("VERBS_SELFTEST_SECRET") != null, "the intruder needs "
        + "VERBS_SELFTEST_SECRET (a wrong one)");
    Properties p = load(dir.resolve("server.properties"));
    Target a = Target.of(p, "a");
    Target c = Target.of(p, "c");
    String floodEnv = System.getenv("VERBS_SELFTEST_FLOOD");
    int flood = floodEnv == null || floodEnv.isEmpty() ? 100 : Integer.parseInt(floodEnv);
    int attemptsA = 3 + flood;
    int attemptsC = 1;
    long t0 = System.nanoTime();
    try (ShuffleTransport t = transport(ip, 0)) {
      for (int i = 0; i < attemptsA + attemptsC; i++) {
        Target target = i < attemptsA ? a : c;
        TransportChannel ch;
        try {
          ch = t.connect(target.peer());
        } catch (IOException e) {
          String m = String.valueOf(e.getMessage());
          check(m.contains("RDMA_CM_EVENT_REJECTED"), "the connection must be rejected by the "
              + "server, got: " + m);
          // The first three, the flood's last and the other server's: the log stays short.
          if (i < 3 || i >= attemptsA - 1) {
            System.out.println("  attempt " + (i + 1) + ": " + m);
          }
          continue;
        }
        Outcome o = new Outcome(0);
        ch.read(List.of(new ReadRequest(target.address(), target.key(), 4096, o, null)));
        String what;
        try {
          o.done.get(60, TimeUnit.SECONDS);
          what = "and read 4096 bytes of the server's region";
        } catch (Exception e) {
          what = "(its read failed: " + e.getMessage() + ")";
        }
        throw new AssertionError("INTRUDER CONNECTED with a wrong secret to "
            + target.peer() + " " + what + "; stats " + t.stats().snapshot());
      }
      check(t.stats().connectionsOpened.get() == 0, "the intruder opened a connection");
      check(t.stats().readsCompleted.get() == 0 && t.stats().bytesRead.get() == 0,
          "the intruder read something: " + t.stats().snapshot());
      System.out.println("intruder stats " + t.stats().snapshot());
      System.out.println("flood: " + (attemptsA + attemptsC) + " connect requests with a "
          + "wrong secret (" + flood + " of them a flood) in "
          + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
    } finally {
      Files.write(dir.resolve("intruder-done"), new byte[0]);
    }
    Properties r = load(dir.resolve("server-rejections.properties"));
    long rejectedA = Long.parseLong(r.getProperty("a.rejected"));
    long rejectedC = Long.parseLong(r.getProperty("c.rejected"));
    System.out.println("server rejected " + rejectedA + " + " + rejectedC + " connection "
        + "requests for " + attemptsA + " + " + attemptsC + " attempts");
    check(rejectedA == attemptsA && rejectedC == attemptsC, "the server's connectionsRejected ("
        + rejectedA + ", " + rejectedC + ") must equal the intruder's attempts (" + attemptsA
        + ", " + attemptsC + ")");
    System.out.println("wrong secret refused, nothing read, rejections counted: ok");
  }

  // ---- client ----

  /** A published region: where to connect and what to read (no record: see RdmaPort). */
  static final class Target {
    final PeerAddress peer;
    final long address;
    final long length;
    final int key;

    Target(PeerAddress peer, long address, long length, int key) {
      this.peer = peer;
      this.address = address;
      this.length = length;
      this.key = key;
    }

    PeerAddress peer() {
      return peer;
    }

    long address() {
      return address;
    }

    long length() {
      return length;
    }

    int key() {
      return key;
    }

    static Target of(Properties p, String n) {
      return new Target(new PeerAddress(p.getProperty(n + ".host"),
          Integer.parseInt(p.getProperty(n + ".port"))),
          Long.parseLong(p.getProperty(n + ".address")),
          Long.parseLong(p.getProperty(n + ".length")),
          Integer.parseInt(p.getProperty(n + ".key")));
    }
  }

  /** Collects one read's outcome; checks the bytes while the buffer is valid. */
  static final class Outcome implements ReadCallback {
    final long fileOffset;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    Outcome(long fileOffset) {
      this.fileOffset = fileOffset;
    }

    @Override
    public void onSuccess(ReadRequest r, ManagedBuffer data) {
      try {
        ByteBuffer b = data.nioByteBuffer();
        if (b.remaining() != r.length()) {
          throw new AssertionError("got " + b.remaining() + " bytes for " + r);
        }
        for (int i = 0; i < r.length(); i++) {
          if (b.get(i) != expected(fileOffset + i)) {
            throw new AssertionError("byte " + i + " of " + r + " differs");
          }
        }
        done.complete(null);
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }

    @Override
    public void onFailure(ReadRequest r, Throwable cause) {
      done.completeExceptionally(cause);
    }
  }

  static void client(String ip, Path dir) throws Exception {
    try (ShuffleTransport t = transport(ip, 0)) {
      logReadDepths();
      Properties p = load(dir.resolve("server.properties"));
      Target a = Target.of(p, "a");
      Target b = Target.of(p, "b");
      Target c = Target.of(p, "c");
      TransportChannel chA = t.connect(a.peer());
      TransportChannel chC = t.connect(c.peer());
      check(chA == t.connect(a.peer()), "one channel per peer, shared");
      long depth = t.stats().readDepth.get();
      System.out.println("  READ depth negotiated: " + depth + ", queue pairs per peer: "
          + t.stats().queuePairsPerPeer.get());
      check(depth > 0, "no READ depth negotiated");
      manySizesAndOffsets(chA, a);
      manySizesAndOffsets(chC, c);
      System.out.println("byte-exact reads: ok");

      largerThanThePool(chA, a, ip);
      System.out.println("read larger than the receive pool, in pieces: ok");

      // Reads above fill the pool many times over and each buffer is released when its
      // callback has checked every byte; under emulation that check holds pool memory longer
      // than poolWait (20 reads overflowed in a CI-like run), so this is printed, not asserted.
      System.out.println("  reads that landed outside the pool before heldPool: "
          + t.stats().poolOverflows.get());
      heldPool(t, chA, a);
      System.out.println("receive pool held by unconsumed reads: the next read lands outside "
          + "it: ok");

      oneBadReadAmongGoodOnes(t, b);
      System.out.println("bad key fails one read, the others to that peer complete: ok");
      chA = t.connect(a.peer());

      twoQueuePairs(ip, a, b);
      System.out.println("two queue pairs per peer (queuePairsPerPeer=2): ok");

      expectRemoteAccessError(chA, a.address(), a.key() ^ 0x5a5a, 4096, "wrong rkey");
      readOk(chC, c, 0, 1 << 20); // the other peer's channel is unaffected
      check(!chA.isActive(), "a channel whose QP failed reports inactive");
      chA = t.connect(a.peer());
      readOk(chA, b, 4096, 100_000); // a new channel, another registration
      System.out.println("wrong rkey: ok");

      expectRemoteAccessError(t.connect(a.peer()), a.address() + a.length() - 10, a.key(), 100,
          "out of bounds");
      readOk(chC, c, 12345, 4096);
      readOk(t.connect(a.peer()), a, a.length() - 10, 10);
      System.out.println("out-of-bounds: ok");

      Files.createFile(dir.resolve("cmd-reregister"));
      Target a2 = Target.of(load(dir.resolve("server2.properties")), "a");
      expectRemoteAccessError(t.connect(a.peer()), a.address(), a.key(), 4096,
          "deregistered key");
      manySizesAndOffsets(t.connect(a.peer()), a2);
      System.out.println("deregister and re-register: ok");
      check(t.stats().connectionsRejected.get() == 0, "the client refused a server's proof");
      if (System.getenv("VERBS_SELFTEST_SECRET") != null) {
        System.out.println("authenticated connections (spark.authenticate): ok");
      }
      System.out.println("client stats " + t.stats().snapshot());
    } finally {
      if (Files.isDirectory(dir)) {
        Files.write(dir.resolve("cmd-stop"), new byte[0]); // lets the server exit either way
      }
    }
  }

  /**
   * Another reader with spark.shuffle.rdma.verbs.queuePairsPerPeer=2: two connections per
   * peer behind one shared channel; a batch of small reads is spread over both (one sub-batch
   * each), reads are byte-exact, and one bad key fails exactly that read and replaces only
   * its queue pair (one reconnect, three connections in all).
   */
  static void twoQueuePairs(String ip, Target a, Target b) throws Exception {
    try (ShuffleTransport t = transport(ip, 0, 2)) {
      TransportChannel ch = t.connect(a.peer());
      check(ch == t.connect(a.peer()), "one striped channel per peer, shared");
      check(t.stats().queuePairsPerPeer.get() == 2, "queuePairsPerPeer gauge "
          + t.stats().queuePairsPerPeer.get());
      check(t.stats().connectionsOpened.get() == 2, t.stats().connectionsOpened.get()
          + " connections for one peer, expected 2 queue pairs");
      System.out.println("  READ depth negotiated: " + t.stats().readDepth.get() + " per queue "
          + "pair, 2 queue pairs to " + a.peer());
      long batches = t.stats().batchesPosted.get();
      List<ReadRequest> batch = new ArrayList<>();
      List<Outcome> outcomes = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        long off = (long) i * 4096 * 7;
        Outcome o = new Outcome(off);
        outcomes.add(o);
        batch.add(new ReadRequest(a.address() + off, a.key(), 4096, o, null));
      }
      ch.read(batch);
      for (Outcome o : outcomes) {
        o.done.get(60, TimeUnit.SECONDS);
      }
      long posted = t.stats().batchesPosted.get() - batches;
      check(posted == 2, "64 small reads went out as " + posted + " sub-batches, expected one "
          + "per queue pair");
      manySizesAndOffsets(ch, a);
      oneBadReadAmongGoodOnes(t, b);
      check(t.stats().connectionsOpened.get() == 3, t.stats().connectionsOpened.get()
          + " connections, expected 2 queue pairs and 1 replacement");
      readOk(t.connect(a.peer()), a, 4096, 100_000);
      System.out.println("  2-queue-pair client stats " + t.stats().snapshot());
    }
  }

  /**
   * The whole 64 MiB region through a client pool of {@link #CLIENT_POOL} bytes: the range is
   * planned the way the reader plans a large block, in pieces of the channel's
   * maxReadLength, all posted as one batch, each checked byte-exact.
   */
  static void largerThanThePool(TransportChannel ch, Target t, String ip) throws Exception {
    int maxRead = ch.maxReadLength();
    check(maxRead <= CLIENT_POOL / 4, "maxReadLength " + maxRead + " must leave room in a pool of "
        + CLIENT_POOL);
    check(t.length() > CLIENT_POOL, "the target must be larger than the pool");
    List<org.apache.spark.shuffle.rdma.reader.PiecePlan.Piece> pieces =
        org.apache.spark.shuffle.rdma.reader.PiecePlan.plan(0, t.length(), t.length(), maxRead);
    List<ReadRequest> batch = new ArrayList<>();
    List<Outcome> outcomes = new ArrayList<>();
    for (org.apache.spark.shuffle.rdma.reader.PiecePlan.Piece p : pieces) {
      Outcome o = new Outcome(p.offsetInRegion);
      outcomes.add(o);
      batch.add(new ReadRequest(t.address() + p.offsetInRegion, t.key(), p.length, o, null));
    }
    long t0 = System.nanoTime();
    ch.read(batch);
    for (Outcome o : outcomes) {
      o.done.get(120, TimeUnit.SECONDS);
    }
    System.out.printf("  %d bytes (pool %d) in %d reads of at most %d bytes, %d ms%n",
        t.length(), CLIENT_POOL, pieces.size(), maxRead, (System.nanoTime() - t0) / 1_000_000);
  }

  /**
   * Fetched blocks a task has not consumed hold pool memory. Reads whose buffers are kept
   * fill the whole pool; one more read must still complete (within poolWait and a tick, in
   * memory of its own, counted in poolOverflows) instead of waiting for a release that only
   * its own consumer could make. After the held buffers go, reads use the pool again.
   */
  static void heldPool(ShuffleTransport t, TransportChannel ch, Target tgt) throws Exception {
    long overflows = t.stats().poolOverflows.get();
    int piece = ch.maxReadLength();
    List<ManagedBuffer> held = new ArrayList<>();
    List<ReadRequest> batch = new ArrayList<>();
    List<CompletableFuture<Void>> filled = new ArrayList<>();
    for (int i = 0; i < CLIENT_POOL / piece; i++) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      filled.add(f);
      batch.add(new ReadRequest(tgt.address() + (long) i * piece, tgt.key(), piece,
          new ReadCallback() {
            @Override
            public void onSuccess(ReadRequest r, ManagedBuffer data) {
              synchronized (held) {
                held.add(data.retain()); // as Spark's fetch iterator does until the task takes it
              }
              f.complete(null);
            }

            @Override
            public void onFailure(ReadRequest r, Throwable cause) {
              f.completeExceptionally(cause);
            }
          }, null));
    }
    ch.read(batch);
    for (CompletableFuture<Void> f : filled) {
      f.get(60, TimeUnit.SECONDS);
    }
    check(t.stats().poolOverflows.get() == overflows, "filling the pool must not overflow");
    long t0 = System.nanoTime();
    try {
      readOk(ch, tgt, 12_345, 64 << 10, 30);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("a read waited 30 s on a receive pool held by " + held.size()
          + " unconsumed reads (spark.shuffle.rdma.verbs.poolWait "
          + System.getenv().getOrDefault("VERBS_SELFTEST_POOL_WAIT", "250ms") + ")");
    }
    long waitedMs = (System.nanoTime() - t0) / 1_000_000;
    long over = t.stats().poolOverflows.get() - overflows;
    check(over == 1, over + " reads landed outside the pool, expected 1");
    synchronized (held) {
      for (ManagedBuffer b : held) {
        b.release();
      }
    }
    readOk(ch, tgt, 777, 64 << 10);
    check(t.stats().poolOverflows.get() - overflows == 1,
        "a read after the pool was released must land in the pool");
    System.out.printf("  pool of %d bytes held by %d reads: the next read completed in %d ms "
        + "outside it (poolOverflows +%d, %d bytes); after the release, in the pool again%n",
        CLIENT_POOL, held.size(), waitedMs, over, t.stats().poolOverflowBytes.get());
  }

  /**
   * One batch to one peer: 24 good reads with one revoked (wrong) key in the middle. The bad
   * read fails with a remote access error; the QP goes to error and flushes the reads behind
   * it, which must complete anyway on a fresh connection (one reconnect).
   */
  static void oneBadReadAmongGoodOnes(ShuffleTransport t, Target good) throws Exception {
    long reconnects = t.stats().reconnects.get();
    long retried = t.stats().readsRetried.get();
    TransportChannel ch = t.connect(good.peer());
    List<ReadRequest> batch = new ArrayList<>();
    List<Outcome> outcomes = new ArrayList<>();
    Random rnd = new Random(9);
    int bad = 8;
    for (int i = 0; i < 24; i++) {
      int len = 256 << 10;
      long off = (long) (rnd.nextDouble() * (good.length() - len));
      Outcome o = new Outcome(off);
      outcomes.add(o);
      int key = i == bad ? good.key() ^ 0x3c3c : good.key();
      batch.add(new ReadRequest(good.address() + off, key, len, o, null));
    }
    ch.read(batch);
    int failed = 0;
    for (int i = 0; i < outcomes.size(); i++) {
      try {
        outcomes.get(i).done.get(120, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        failed++;
        String m = String.valueOf(e.getCause().getMessage());
        check(i == bad, "read " + i + " (good key) failed: " + m);
        check(m.contains("IBV_WC_REM_ACCESS_ERR"), "the bad read must fail with its own error: "
            + m);
      }
    }
    check(failed == 1, failed + " reads failed, expected exactly the bad one");
    long moved = t.stats().readsRetried.get() - retried;
    long again = t.stats().reconnects.get() - reconnects;
    check(again == 1, again + " reconnects, expected 1");
    System.out.printf("  1 of %d reads failed, %d posted again on a fresh connection, %d "
        + "reconnect%n", outcomes.size(), moved, again);
  }

  static void manySizesAndOffsets(TransportChannel ch, Target t) throws Exception {
    int[] sizes = {1, 7, 63, 4095, 4096, 4097, 65536, 100_003, 1 << 20, (4 << 20) + 3, 8 << 20};
    Random rnd = new Random(7);
    // VERBS_SELFTEST_ROUNDS: fewer rounds for slow emulated devices (Soft-RoCE under TCG).
    int rounds = Integer.parseInt(System.getenv().getOrDefault("VERBS_SELFTEST_ROUNDS", "20"));
    long bytes = 0;
    long t0 = System.nanoTime();
    for (int round = 0; round < rounds; round++) {
      List<ReadRequest> batch = new ArrayList<>();
      List<Outcome> outcomes = new ArrayList<>();
      int n = 1 + rnd.nextInt(40);
      for (int i = 0; i < n; i++) {
        int len = (int) Math.min(sizes[rnd.nextInt(sizes.length)], t.length());
        long off = (long) (rnd.nextDouble() * (t.length() - len));
        Outcome o = new Outcome(off);
        outcomes.add(o);
        batch.add(new ReadRequest(t.address() + off, t.key(), len, o, null));
        bytes += len;
      }
      ch.read(batch);
      for (Outcome o : outcomes) {
        o.done.get(60, TimeUnit.SECONDS);
      }
    }
    System.out.printf("  %d rounds, %d bytes read and checked in %d ms%n", rounds, bytes,
        (System.nanoTime() - t0) / 1_000_000);
  }

  static void readOk(TransportChannel ch, Target t, long off, int len) throws Exception {
    readOk(ch, t, off, len, 60);
  }

  static void readOk(TransportChannel ch, Target t, long off, int len, int seconds)
      throws Exception {
    Outcome o = new Outcome(off);
    ch.read(List.of(new ReadRequest(t.address() + off, t.key(), len, o, null)));
    o.done.get(seconds, TimeUnit.SECONDS);
  }

  static void expectRemoteAccessError(TransportChannel ch, long address, int key, int len,
      String what) throws Exception {
    Outcome o = new Outcome(0);
    ch.read(List.of(new ReadRequest(address, key, len, o, null)));
    try {
      o.done.get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      String m = String.valueOf(e.getCause().getMessage());
      check(m.contains("IBV_WC_REM_ACCESS_ERR"), what + ": expected a remote access error, got "
          + m);
      return;
    }
    throw new AssertionError(what + ": the read succeeded");
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }
}
