/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientBootstrap;
import org.apache.spark.network.client.TransportClientFactory;
import org.apache.spark.network.crypto.AuthClientBootstrap;
import org.apache.spark.network.crypto.AuthServerBootstrap;
import org.apache.spark.network.server.TransportServer;
import org.apache.spark.network.server.TransportServerBootstrap;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.rdma.compat.SparkShims;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.TransportStats;

/**
 * One-sided reads emulated over TCP, on Spark's network-common (Netty event loops, and its
 * auth handshake and encryption when spark.authenticate / spark.network.crypto.enabled are
 * set). Reads travel in batches ({@link ReadBatch}) carrying (key, address, length); the
 * server answers from the registered memory without any shuffle logic, so the same reader
 * code drives this transport and RDMA READ. What a peer can make the server do before and
 * after authentication is bounded by {@link ConnectionGuard}, {@link InboundGuard}, {@link
 * AuthGate}, {@link AnswerFlow} and {@link RegionServer}.
 */
public final class TcpTransport implements ShuffleTransport {
  /** Spark's TransportConf module: spark.shuffle.io.* tune this transport like Spark's own. */
  static final String MODULE = "shuffle";

  private final TransportSettings settings;
  private final TransportStats stats = new TransportStats(false);
  private final RegionServer regionServer;
  private final ConnectionGuard guard;
  private final AnswerFlow flow;
  private final TransportContext context;
  private final TransportServer server;
  private final TransportClientFactory clientFactory;
  private final PeerAddress localAddress;
  private final ConcurrentHashMap<PeerAddress, TcpChannel> channels = new ConcurrentHashMap<>();
  /** One lock per peer: concurrent connects to one peer open one connection, not several. */
  private final ConcurrentHashMap<PeerAddress, Object> connectLocks = new ConcurrentHashMap<>();
  /** Fails channels whose oldest read waited longer than spark.shuffle.rdma.readTimeout. */
  private final ScheduledExecutorService timeouts;
  private volatile boolean closed;
  /** Reads at least this long from a file-backed region go by sendfile; 0: never. */
  private final long sendfileThreshold;

  public TcpTransport(TransportSettings settings) throws IOException {
    this.settings = settings;
    SparkConf conf = settings.conf().sparkConf().clone();
    // Netty's idle timeout (a connection quiet this long with requests outstanding is closed)
    // is only a backstop, twice the read timeout: reads time out in TcpChannel.checkTimeout,
    // which also catches a read stuck on a connection that is not quiet.
    conf.set("spark.shuffle.io.connectionTimeout", 2 * settings.conf().readTimeoutMs() + "ms");
    // No SASL fallback on this port: with the auth engine on, a peer could otherwise downgrade
    // the handshake to SASL (and no encryption). Both ends are this plugin: nothing needs it.
    conf.set("spark.network.crypto.saslFallback", "false");
    TransportConf transportConf =
        SparkShims.transportConf(conf, MODULE, settings.numUsableCores());
    this.flow = new AnswerFlow(settings.conf().readTimeoutMs());
    this.regionServer = new RegionServer(stats, settings.appId(), settings.authenticate(),
        settings.conf().maxReadSize(), flow);
    this.context = new TransportContext(transportConf, regionServer, true);
    boolean encrypted = settings.authenticate() && transportConf.encryptionEnabled();
    this.guard = new ConnectionGuard(settings.conf().tcpMaxConnectionsPerAddress(),
        settings.conf().tcpMaxConnections(), settings.conf().tcpMaxRequestFrameSize(),
        settings.conf().tcpHandshakeTimeoutMs(), settings.authenticate(), encrypted);
    List<TransportServerBootstrap> serverBootstraps = new ArrayList<>();
    serverBootstraps.add(guard); // first: its limits apply before authentication
    // Answers as gathered writes / sendfile (see ServeEncoder). sendfile only on plaintext
    // connections: an encrypted one must pass every byte through the cipher anyway.
    this.sendfileThreshold = encrypted ? 0L : settings.conf().tcpSendfileThreshold();
    serverBootstraps.add(ServeEncoder.bootstrap(!encrypted, sendfileThreshold));
    List<TransportClientBootstrap> clientBootstraps = new ArrayList<>();
    if (settings.authenticate()) {
      serverBootstraps.add(new AuthServerBootstrap(transportConf, settings.securityManager()));
      serverBootstraps.add(new AuthGate(guard)); // right after: it wraps the auth handler
      clientBootstraps.add(
          new AuthClientBootstrap(transportConf, settings.appId(), settings.securityManager()));
    }
    String bindHost = settings.conf().bindAddress().isEmpty()
        ? settings.advertisedHost() : settings.conf().bindAddress();
    try {
      this.server = context.createServer(bindHost, settings.conf().port(), serverBootstraps);
    } catch (RuntimeException e) {
      context.close();
      throw new IOException("tcp transport cannot listen on " + bindHost + ":"
          + settings.conf().port() + " (" + e.getMessage() + "); set "
          + "spark.shuffle.rdma.bindAddress / spark.shuffle.rdma.port to a free address", e);
    }
    this.clientFactory = context.createClientFactory(clientBootstraps);
    this.localAddress = new PeerAddress(bindHost, server.getPort());
    long timeoutMs = settings.conf().readTimeoutMs();
    long periodMs = Math.max(25, Math.min(1000, timeoutMs / 4));
    this.timeouts = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "rdma-tcp-read-timeout");
      t.setDaemon(true);
      return t;
    });
    timeouts.scheduleWithFixedDelay(this::checkTimeouts, periodMs, periodMs,
        TimeUnit.MILLISECONDS);
  }

  private void checkTimeouts() {
    long now = System.nanoTime();
    for (TcpChannel ch : channels.values()) {
      ch.checkTimeout(now);
    }
  }

  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public PeerAddress localAddress() {
    return localAddress;
  }

  @Override
  public RegisteredRegion register(ByteBuffer memory) {
    return register(memory, BackingCheck.NONE);
  }

  @Override
  public RegisteredRegion register(ByteBuffer memory, BackingCheck backing) {
    checkLength(memory);
    return add(memory, backing, null, 0L);
  }

  private static void checkLength(ByteBuffer memory) {
    if (memory.limit() <= 0 || memory.limit() > (1L << 30)) {
      throw new IllegalArgumentException("region length must be in [1, 1 GiB]: " + memory.limit());
    }
  }

  /** Registers a checked region; {@code file} (may be null) is then owned by the region. */
  private TcpRegion add(ByteBuffer memory, BackingCheck backing, FileChannel file,
      long fileOffset) {
    return counted(regionServer.add(memory, backing, file, fileOffset));
  }

  private TcpRegion counted(TcpRegion region) {
    stats.regionsRegistered.incrementAndGet();
    stats.bytesRegistered.addAndGet(region.length());
    return region;
  }

  @Override
  public RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs, MappedFileSource source) {
    if (source == null || sendfileThreshold <= 0 || memory.limit() < sendfileThreshold) {
      return register(memory, backing); // no read of it could go by sendfile
    }
    checkLength(memory); // before the descriptor is opened: a refusal leaks nothing
    FileChannel file;
    try {
      // Opened now, like the mapping: both name this inode even if the path changes later.
      file = FileChannel.open(source.file().toPath(), StandardOpenOption.READ);
    } catch (IOException | RuntimeException e) {
      return register(memory, backing); // served from the mapping, as without a source
    }
    return add(memory, backing, file, source.offset());
  }

  @Override
  public RegisteredRegion registerAt(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs, MappedFileSource source, long address, int key)
      throws IOException {
    checkLength(memory);
    FileChannel file = null;
    if (source != null && sendfileThreshold > 0 && memory.limit() >= sendfileThreshold) {
      try {
        file = FileChannel.open(source.file().toPath(), StandardOpenOption.READ);
      } catch (IOException | RuntimeException e) {
        file = null; // served from the mapping, as in register
      }
    }
    TcpRegion region = regionServer.addAt(key, address, memory, backing, file,
        source == null ? 0L : source.offset());
    if (region == null) {
      if (file != null) {
        file.close();
      }
      throw new IOException("the capability of a restored region is taken or malformed "
          + "(key " + key + ")");
    }
    return counted(region);
  }

  @Override
  public CompletableFuture<Void> deregister(RegisteredRegion region) {
    TcpRegion r = (TcpRegion) region;
    regionServer.remove(r);
    boolean wasLive = r.isLive();
    CompletableFuture<Void> done = r.revoke();
    if (wasLive) {
      stats.regionsRegistered.decrementAndGet();
      stats.bytesRegistered.addAndGet(-r.length());
    }
    return done;
  }

  @Override
  public TransportChannel connect(PeerAddress peer) throws IOException {
    if (closed) {
      throw new IOException("tcp transport is closed");
    }
    TcpChannel ch = channels.get(peer);
    if (ch != null && ch.isActive()) {
      return ch;
    }
    synchronized (connectLocks.computeIfAbsent(peer, p -> new Object())) {
      ch = channels.get(peer);
      if (ch != null && ch.isActive()) {
        return ch; // another thread connected while this one waited
      }
      TransportClient client;
      try {
        // Unmanaged: this channel is the client's only user (the pooled factory would hand
        // the same client to a second channel, and their callbacks would collide).
        client = clientFactory.createUnmanagedClient(peer.host(), peer.port());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while connecting to " + peer, e);
      }
      stats.connectionsOpened.incrementAndGet();
      TcpChannel fresh = new TcpChannel(peer, client, settings.conf().maxReadsInFlightPerPeer(),
          settings.conf().maxReadSize(), settings.conf().readTimeoutMs(), stats);
      channels.put(peer, fresh);
      if (ch != null) {
        ch.failChannel(new IOException("connection to " + peer + " was lost"));
      }
      if (closed) {
        fresh.failChannel(new IOException("tcp transport closed"));
        throw new IOException("tcp transport is closed");
      }
      return fresh;
    }
  }

  @Override
  public TransportStats stats() {
    return stats;
  }

  /** The server's pre-authentication limits and their refusal counts (for tests). */
  ConnectionGuard guard() {
    return guard;
  }

  /** The server's per-connection answer bounds (for tests). */
  AnswerFlow flow() {
    return flow;
  }

  /** The region server (for tests: connections it closed). */
  RegionServer regionServer() {
    return regionServer;
  }

  /** Number of live registered regions (for leak checks). */
  public int liveRegions() {
    return regionServer.liveRegions();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    timeouts.shutdownNow();
    for (TcpChannel ch : Collections.list(channels.elements())) {
      ch.failChannel(new IOException("tcp transport closed"));
    }
    channels.clear();
    clientFactory.close();
    server.close();
    context.close();
  }
}
