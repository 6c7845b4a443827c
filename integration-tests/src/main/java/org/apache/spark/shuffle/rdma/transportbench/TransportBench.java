/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transportbench;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.buffer.ByteBuf;
import org.apache.spark.SparkConf;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NettyManagedBuffer;
import org.apache.spark.network.client.ChunkReceivedCallback;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientFactory;
import org.apache.spark.network.server.NoOpRpcHandler;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.TransportFactory;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;

/**
 * Transport benchmark: one JVM serves a file, another fetches N blocks of one size from it,
 * through (a) Spark's own block serving path (network-common, OpenBlocks-style stream of file
 * segments, {@link SparkBlockServer}) or (b) the plugin's transport (tcp, or verbs where RDMA
 * exists: the same one-sided reads of a registered mapping). Mode {@code plugin} takes the
 * transport from the serve argument / {@code -Dbench.transport}; modes {@code tcp} and
 * {@code verbs} name it, so one run can hold both columns. With verbs the server JVM only
 * registers the file through the ShuffleTransport SPI: the client's RDMA READs are served by
 * the (soft or hardware) RDMA device, no server thread runs per block. Requests are grouped and kept
 * in flight the way Spark's fetcher does by default (spark.reducer.maxSizeInFlight 48 MiB,
 * requests of at most a fifth of it), and every block's first and last word are checked.
 * Mode {@code floor} ({@link FloorServer}) is no product: the simplest server, blocking
 * sockets and one {@code sendfile} per block with no framing, so its CPU is what the kernel
 * charges for the bytes with no server work around them.
 *
 * <pre>
 *   serve spark|plugin|tcp|verbs|floor FILE BYTES BIND_HOST INFO_FILE [tcp|verbs]
 *   fetch spark|plugin|tcp|verbs|floor INFO_FILE SIZES BYTES_PER_SIZE
 * </pre>
 * System properties {@code spark.shuffle.rdma.*} given to either JVM go into the plugin's
 * configuration (e.g. {@code -Dspark.shuffle.rdma.device=rxe0}). On stderr the client logs,
 * per size, the server's CPU per thread over the measured run (the threads that used any), and
 * with {@code -Dbench.idleSeconds=N} the server's CPU over N seconds of doing nothing at the
 * end (its idle threads' floor: GC, JIT, timers).
 * fetch prints one CSV row per size: mode,size,blocks,bytes,seconds,clientCpuS,serverCpuS,
 * requests (requests the client sent: RPCs plus chunk fetches for spark, reads for plugin).
 */
public final class TransportBench {
  static final long MAX_IN_FLIGHT = 48L << 20;
  static final long MAX_REQUEST = MAX_IN_FLIGHT / 5;

  private TransportBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 5 && args[0].equals("serve")) {
      serve(args[1], new File(args[2]), Long.parseLong(args[3]), args[4],
          Paths.get(args[5]), args.length > 6 ? args[6] : "tcp");
    } else if (args.length == 5 && args[0].equals("fetch")) {
      fetch(args[1], Paths.get(args[2]), args[3], Long.parseLong(args[4]), System.out);
    } else {
      System.err.println("usage: serve spark|plugin|tcp|verbs|floor FILE BYTES BIND_HOST"
          + " INFO_FILE [tcp|verbs] | fetch spark|plugin|tcp|verbs|floor INFO_FILE SIZES BYTES_PER_SIZE");
      System.exit(2);
    }
  }

  static TransportConf sparkConf() {
    Map<String, String> m = new HashMap<>();
    // One server and one client thread, as the plugin's tcp transport gets with one core.
    m.put("spark.shuffle.io.serverThreads", "1");
    m.put("spark.shuffle.io.clientThreads", "1");
    return new TransportConf("shuffle", new MapConfigProvider(m));
  }

  /** The plugin transport a mode names: tcp or verbs, or for "plugin" the given default. */
  static String transportOf(String mode, String dflt) {
    return mode.equals("tcp") || mode.equals("verbs") ? mode : dflt;
  }

  static ShuffleTransport pluginTransport(String bindHost, String transport) throws IOException {
    // Plugin settings to try (e.g. JAVA_TOOL_OPTIONS=-Dspark.shuffle.rdma.tcp.sendfileThreshold=0).
    SparkConf conf = new SparkConf(false);
    for (String k : System.getProperties().stringPropertyNames()) {
      if (k.startsWith("spark.shuffle.rdma.")) {
        conf.set(k, System.getProperty(k));
      }
    }
    conf.set("spark.shuffle.rdma.transport", transport);
    return TransportFactory.create(new TransportSettings(new RdmaShuffleConf(conf), bindHost,
        null, "transport-bench", 1));
  }

  // ---- server -----------------------------------------------------------------------------

  private static void serve(String mode, File file, long bytes, String bindHost, Path info,
      String transport) throws Exception {
    PatternFile.create(file, bytes);
    long pid = ProcessHandle.current().pid();
    String line;
    AutoCloseable server;
    if (mode.equals("spark")) {
      SparkBlockServer s = new SparkBlockServer(sparkConf(), file, bindHost);
      server = s;
      line = pid + " " + bindHost + " " + s.port() + " 0 0 " + file.length();
    } else if (mode.equals("floor")) {
      FloorServer s = new FloorServer(file, bindHost);
      server = s;
      line = pid + " " + bindHost + " " + s.port() + " 0 0 " + file.length();
    } else {
      ShuffleTransport t = pluginTransport(bindHost, transportOf(mode, transport));
      server = t;
      // As the plugin's MapOutputRegistry does: the mode the transport asks for (verbs before
      // Linux 6.2: a shared READ_WRITE mapping), once more with its fallback if the kernel
      // refuses to pin it. Nothing writes through the mapping.
      // Also with the check the plugin runs before every serve (the file still holds the
      // registered bytes) and the file the mapping comes from (tcp sends large reads from it
      // with sendfile).
      long registered = file.length();
      BackingCheck check = () -> file.length() >= registered ? null : "served file shrank";
      MappedFileSource source = new MappedFileSource(file, 0);
      FileChannel.MapMode mapMode = t.registrationMapMode();
      RegisteredRegion r;
      try {
        r = t.register(map(file, mapMode), check, mapMode, source);
      } catch (IOException e) {
        FileChannel.MapMode fallback = t.registrationFallback(mapMode, e);
        if (fallback == null || fallback == mapMode) {
          throw e;
        }
        r = t.register(map(file, fallback), check, fallback, source);
      }
      line = pid + " " + t.localAddress().host() + " " + t.localAddress().port() + " "
          + r.address() + " " + r.key() + " " + file.length();
    }
    Path tmp = info.resolveSibling(info.getFileName() + ".tmp");
    Files.write(tmp, (line + "\n").getBytes(StandardCharsets.US_ASCII));
    Files.move(tmp, info, StandardCopyOption.ATOMIC_MOVE);
    // Serve until the harness kills this JVM; close on the way out.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        server.close();
      } catch (Exception ignored) {
        // exiting anyway
      }
    }));
    new CountDownLatch(1).await();
  }

  private static MappedByteBuffer map(File file, FileChannel.MapMode mode) throws IOException {
    try (FileChannel ch = mode == FileChannel.MapMode.READ_ONLY
        ? FileChannel.open(file.toPath(), StandardOpenOption.READ)
        : FileChannel.open(file.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return ch.map(mode, 0, file.length());
    }
  }

  // ---- client -----------------------------------------------------------------------------

  /** One block source; fetch() may return before the blocks arrive (sink is told). */
  interface Source extends AutoCloseable {
    void fetch(int size, int count, long first, RequestDone done);

    long requests();
  }

  interface RequestDone {
    void blocks(int ok, String problem);
  }

  private static void fetch(String mode, Path info, String sizes, long bytesPerSize,
      PrintStream out) throws Exception {
    String[] f = Files.readAllLines(info).get(0).trim().split(" ");
    long serverPid = Long.parseLong(f[0]);
    String host = f[1];
    int port = Integer.parseInt(f[2]);
    long fileLength = Long.parseLong(f[5]);
    try (Source src = mode.equals("spark") ? new SparkSource(host, port, fileLength)
        : mode.equals("floor") ? new FloorSource(host, port, fileLength)
        : new PluginSource(transportOf(mode, System.getProperty("bench.transport", "tcp")),
            host, port, Long.parseLong(f[3]), Integer.parseInt(f[4]), fileLength)) {
      // Warm-up of both JVMs over every size first (JIT of the serving and receiving paths,
      // connections, page cache), not measured: with only the per-size warm-up below, the
      // JIT was still compiling during the first measured sizes (measured: three 64 KiB
      // runs in a row cost the server 0.76, 0.23 and 0.29 s on the plugin path, 0.74, 0.49
      // and 0.18 s on Spark's).
      for (String s : sizes.split(",")) {
        int size = (int) parseBytes(s);
        run(src, size, (int) Math.max(4, Math.min(40_000, (bytesPerSize / 8) / size)),
            fileLength);
      }
      for (String s : sizes.split(",")) {
        int size = (int) parseBytes(s);
        // Warm-up: JIT, connections, page cache; not measured. Half the measured bytes, not a
        // fixed count of blocks: code that runs once per request or batch of blocks (the
        // plugin's tcp batches hold 4 blocks of 64 KiB) needs as many calls as per-block code
        // before C2 compiles it. With 4,000 blocks, the plugin server's C2 thread still ran
        // 0.05 to 0.33 s inside the measured 64 KiB window, Spark's 0.01 s.
        run(src, size, (int) Math.max(4, (bytesPerSize / 2) / size), fileLength);
        int blocks = (int) Math.max(4, bytesPerSize / size);
        long req0 = src.requests();
        double[] cc0 = ProcStat.cpu(ProcessHandle.current().pid());
        double c0 = cc0[0];
        Map<String, Double> th0 = ProcStat.threadCpuSeconds(serverPid);
        double[] sc0 = ProcStat.cpu(serverPid);
        double s0 = sc0[0];
        long t0 = System.nanoTime();
        run(src, size, blocks, fileLength);
        double secs = (System.nanoTime() - t0) / 1e9;
        double[] cc1 = ProcStat.cpu(ProcessHandle.current().pid());
        double c1 = cc1[0];
        double[] sc1 = ProcStat.cpu(serverPid);
        double s1 = sc1[0];
        Map<String, Double> th1 = ProcStat.threadCpuSeconds(serverPid);
        out.printf("%s,%d,%d,%d,%.4f,%.3f,%.3f,%d%n", mode, size, blocks, (long) blocks * size,
            secs, c1 - c0, s1 - s0, src.requests() - req0);
        out.flush();
        System.err.printf("%s %d B x %d: server CPU %.3f s (user %.3f, system %.3f) in %.3f s;"
            + " by thread: %s%n", mode, size, blocks, s1 - s0, sc1[1] - sc0[1], sc1[2] - sc0[2],
            secs, ProcStat.describe(ProcStat.delta(th0, th1)));
        // The user / system split of both sides, for the per-block model in docs/benchmarks.md.
        System.err.printf("cpu-split %s %d client user %.2f sys %.2f server user %.2f sys %.2f%n",
            mode, size, cc1[1] - cc0[1], cc1[2] - cc0[2], sc1[1] - sc0[1], sc1[2] - sc0[2]);
      }
      long idle = Long.getLong("bench.idleSeconds", 0L);
      if (idle > 0) {
        Map<String, Double> th0 = ProcStat.threadCpuSeconds(serverPid);
        double[] s0 = ProcStat.cpu(serverPid);
        Thread.sleep(idle * 1000);
        double[] s1 = ProcStat.cpu(serverPid);
        System.err.printf("%s server idle: CPU %.3f s (user %.3f, system %.3f) in %d s;"
            + " by thread: %s%n", mode, s1[0] - s0[0], s1[1] - s0[1], s1[2] - s0[2],
            idle, ProcStat.describe(ProcStat.delta(th0,
                ProcStat.threadCpuSeconds(serverPid))));
      }
    }
  }

  /** Fetches {@code blocks} blocks in Spark-sized requests with Spark's in-flight bound. */
  private static void run(Source src, int size, int blocks, long fileLength) throws Exception {
    int perRequest = (int) Math.max(1, MAX_REQUEST / size);
    long requestBytes = (long) perRequest * size;
    int inFlight = (int) Math.max(1, MAX_IN_FLIGHT / requestBytes);
    Semaphore window = new Semaphore(inFlight);
    AtomicReference<String> problem = new AtomicReference<>();
    int requests = (blocks + perRequest - 1) / perRequest;
    CountDownLatch all = new CountDownLatch(requests);
    long next = 0;
    for (int r = 0; r < requests; r++) {
      int count = (int) Math.min(perRequest, blocks - next);
      window.acquire();
      src.fetch(size, count, next, (ok, why) -> {
        if (why != null) {
          problem.compareAndSet(null, why);
        }
        window.release();
        all.countDown();
      });
      next += count;
    }
    if (!all.await(10, TimeUnit.MINUTES)) {
      throw new IllegalStateException("fetches did not finish in 10 minutes");
    }
    if (problem.get() != null) {
      throw new IllegalStateException("wrong or failed block: " + problem.get());
    }
  }

  /** Counts a request's blocks; reports once, when the last one is in. */
  static final class RequestTally {
    private final int count;
    private final RequestDone done;
    private final AtomicLong left;
    private final AtomicReference<String> problem = new AtomicReference<>();

    RequestTally(int count, RequestDone done) {
      this.count = count;
      this.done = done;
      this.left = new AtomicLong(count);
    }

    void block(String why) {
      if (why != null) {
        problem.compareAndSet(null, why);
      }
      if (left.decrementAndGet() == 0) {
        done.blocks(count, problem.get());
      }
    }
  }

  /** Spark's path: one open RPC per request, then a chunk fetch per block. */
  static final class SparkSource implements Source {
    private final TransportContext context;
    private final TransportClientFactory factory;
    private final TransportClient client;
    private final AtomicLong requests = new AtomicLong();

    private final long fileLength;

    SparkSource(String host, int port, long fileLength) throws Exception {
      this.fileLength = fileLength;
      TransportConf conf = sparkConf();
      context = new TransportContext(conf, new NoOpRpcHandler());
      factory = context.createClientFactory();
      client = factory.createClient(host, port);
    }

    @Override
    public void fetch(int size, int count, long first, RequestDone done) {
      ByteBuffer open = ByteBuffer.allocate(16).putInt(size).putInt(count).putLong(first);
      open.flip();
      requests.incrementAndGet();
      RequestTally tally = new RequestTally(count, done);
      client.sendRpc(open, new RpcResponseCallback() {
        @Override
        public void onSuccess(ByteBuffer response) {
          long streamId = response.getLong(0);
          for (int i = 0; i < count; i++) {
            long offset = PatternFile.offsetOf(first + i, size, fileLength);
            requests.incrementAndGet();
            client.fetchChunk(streamId, i, new ChunkReceivedCallback() {
              @Override
              public void onSuccess(int chunkIndex, ManagedBuffer buffer) {
                tally.block(checked(buffer, offset, size));
              }

              @Override
              public void onFailure(int chunkIndex, Throwable e) {
                tally.block("chunk " + chunkIndex + ": " + e);
              }
            });
          }
        }

        @Override
        public void onFailure(Throwable e) {
          for (int i = 0; i < count; i++) {
            tally.block("open: " + e);
          }
        }
      });
    }

    @Override
    public long requests() {
      return requests.get();
    }

    @Override
    public void close() {
      client.close();
      factory.close();
      context.close();
    }
  }

  /** The plugin's path: one one-sided read per block, a request's reads posted as a batch. */
  static final class PluginSource implements Source {
    private final ShuffleTransport transport;
    private final TransportChannel channel;
    private final long address;
    private final int key;
    private final long fileLength;
    private final AtomicLong requests = new AtomicLong();

    PluginSource(String transportName, String host, int port, long address, int key,
        long fileLength) throws IOException {
      this.transport = pluginTransport(System.getProperty("bench.bind", "127.0.0.1"),
          transportName);
      this.channel = transport.connect(new PeerAddress(host, port));
      this.address = address;
      this.key = key;
      this.fileLength = fileLength;
    }

    @Override
    public void fetch(int size, int count, long first, RequestDone done) {
      RequestTally tally = new RequestTally(count, done);
      List<ReadRequest> batch = new ArrayList<>(count);
      ReadCallback cb = new ReadCallback() {
        @Override
        public void onSuccess(ReadRequest r, ManagedBuffer data) {
          long offset = (Long) r.attachment();
          tally.block(checked(data, offset, size));
        }

        @Override
        public void onFailure(ReadRequest r, Throwable cause) {
          tally.block("read at " + r.attachment() + ": " + cause);
        }
      };
      for (int i = 0; i < count; i++) {
        long offset = PatternFile.offsetOf(first + i, size, fileLength);
        batch.add(new ReadRequest(address + offset, key, size, cb, offset));
      }
      requests.addAndGet(count);
      channel.read(batch);
    }

    @Override
    public long requests() {
      return requests.get();
    }

    @Override
    public void close() {
      transport.close();
    }
  }

  /**
   * Checks a received block (both paths own the buffer and release it after the callback).
   * A Netty buffer is checked in place: its NIO form is a copy when the frame arrived in
   * several socket reads, a copy no transport made and Spark's reader, which streams blocks,
   * never asks for.
   */
  static String checked(ManagedBuffer buffer, long offset, int size) {
    try {
      if (buffer instanceof NettyManagedBuffer) {
        ByteBuf b = (ByteBuf) buffer.convertToNetty();
        try {
          return PatternFile.check(b, offset, size);
        } finally {
          b.release();
        }
      }
      return PatternFile.check(buffer.nioByteBuffer(), offset, size);
    } catch (IOException e) {
      return e.toString();
    }
  }

  static long parseBytes(String s) {
    String v = s.trim().toLowerCase();
    long mult = 1;
    if (v.endsWith("k")) {
      mult = 1L << 10;
    } else if (v.endsWith("m")) {
      mult = 1L << 20;
    } else if (v.endsWith("g")) {
      mult = 1L << 30;
    }
    if (mult != 1) {
      v = v.substring(0, v.length() - 1);
    }
    return Long.parseLong(v) * mult;
  }
}
