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
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportFactory;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;

/**
 * End-to-end test of the verbs transport on a real (or Soft-RoCE) device, in two JVMs that
 * coordinate through files in a shared directory:
 * <pre>
 *   java -cp 'lib/*' ...VerbsSelfTest server &lt;ip&gt; &lt;port&gt; &lt;dir&gt;
 *   java -cp 'lib/*' ...VerbsSelfTest client &lt;ip&gt; &lt;dir&gt;
 * </pre>
 * The server runs two transports (two "peers") serving mmapped files; the client reads
 * many sizes and offsets byte-exact, checks that a wrong rkey and an out-of-bounds READ fail
 * with IBV_WC_REM_ACCESS_ERR while the other peer's channel keeps working and a reconnect
 * works, and that a region deregistered and registered again is refused under its old key
 * and readable under its new one. Exit status 0 on success.
 */
public final class VerbsSelfTest {
  static final int SIZE_A = 64 << 20;
  static final int SIZE_B = 8 << 20;

  private VerbsSelfTest() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("server")) {
      server(args[1], Integer.parseInt(args[2]), Paths.get(args[3]));
    } else if (args.length == 3 && args[0].equals("client")) {
      client(args[1], Paths.get(args[2]));
      System.out.println("VerbsSelfTest: PASS");
    } else {
      System.err.println("usage: VerbsSelfTest server <ip> <port> <dir> | client <ip> <dir>");
      System.exit(2);
    }
    System.exit(0);
  }

  /** The byte at position i of every test file. */
  static byte expected(long i) {
    return (byte) ((i ^ (i >>> 8) ^ (i >>> 17)) * 0x9E + 1);
  }

  static ShuffleTransport transport(String ip, int port) throws IOException {
    SparkConf conf = new SparkConf(false)
        .set("spark.shuffle.rdma.transport", "verbs")
        .set("spark.shuffle.rdma.bindAddress", ip)
        .set("spark.shuffle.rdma.port", Integer.toString(port))
        .set("spark.shuffle.rdma.verbs.receivePoolSize", "64m")
        .set("spark.shuffle.rdma.readTimeout", "20s");
    String dev = System.getenv("RDMA_DEVICE");
    if (dev != null && !dev.isEmpty()) {
      conf.set("spark.shuffle.rdma.device", dev);
    }
    return TransportFactory.create(new TransportSettings(new RdmaShuffleConf(conf), ip, null,
        "verbs-selftest", 2));
  }

  static MappedByteBuffer mapFile(Path file, int size) throws IOException {
    byte[] chunk = new byte[1 << 20];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int base = 0; base < size; base += chunk.length) {
        for (int i = 0; i < chunk.length; i++) {
          chunk[i] = expected((long) base + i);
        }
        out.write(chunk, 0, Math.min(chunk.length, size - base));
      }
    }
    // Mapped the way the Spark layer maps map outputs for this transport.
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      return ch.map(FileChannel.MapMode.PRIVATE, 0, size);
    }
  }

  // ---- server ----

  static void server(String ip, int port, Path dir) throws Exception {
    try (ShuffleTransport a = transport(ip, port); ShuffleTransport b = transport(ip, port + 1)) {
      MappedByteBuffer fileA = mapFile(dir.resolve("a.bin"), SIZE_A);
      MappedByteBuffer fileB = mapFile(dir.resolve("b.bin"), SIZE_B);
      RegisteredRegion ra = a.register(fileA);
      RegisteredRegion rb = a.register(fileB);
      RegisteredRegion rc = b.register(fileB); // the second peer serves b.bin too
      Properties p = new Properties();
      put(p, "a", a.localAddress(), ra);
      put(p, "b", a.localAddress(), rb);
      put(p, "c", b.localAddress(), rc);
      publish(dir, "server.properties", p);
      waitFor(dir.resolve("cmd-reregister"));
      a.deregister(ra).get(30, TimeUnit.SECONDS);
      RegisteredRegion ra2 = a.register(fileA);
      Properties p2 = new Properties();
      put(p2, "a", a.localAddress(), ra2);
      publish(dir, "server2.properties", p2);
      waitFor(dir.resolve("cmd-stop"));
      a.deregister(ra2).get(30, TimeUnit.SECONDS);
      a.deregister(rb).get(30, TimeUnit.SECONDS);
      b.deregister(rc).get(30, TimeUnit.SECONDS);
      System.out.println("VerbsSelfTest server: stopped cleanly, stats " + a.stats().snapshot());
    }
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
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
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
      Properties p = load(dir.resolve("server.properties"));
      Target a = Target.of(p, "a");
      Target b = Target.of(p, "b");
      Target c = Target.of(p, "c");
      TransportChannel chA = t.connect(a.peer());
      TransportChannel chC = t.connect(c.peer());
      check(chA == t.connect(a.peer()), "one channel per peer, shared");
      manySizesAndOffsets(chA, a);
      manySizesAndOffsets(chC, c);
      System.out.println("byte-exact reads: ok");

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
      System.out.println("client stats " + t.stats().snapshot());
    } finally {
      if (Files.isDirectory(dir)) {
        Files.write(dir.resolve("cmd-stop"), new byte[0]); // lets the server exit either way
      }
    }
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
    Outcome o = new Outcome(off);
    ch.read(List.of(new ReadRequest(t.address() + off, t.key(), len, o, null)));
    o.done.get(60, TimeUnit.SECONDS);
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
