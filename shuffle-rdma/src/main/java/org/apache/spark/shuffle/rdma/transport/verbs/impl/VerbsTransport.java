/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.MapModeChoice;
import org.apache.spark.shuffle.rdma.transport.verbs.OdpChoice;
import org.apache.spark.shuffle.rdma.transport.verbs.QueuePairStriping;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RDMA READ through DiSNI's verbs API. Created by VerbsTransportProvider through the
 * isolated class loader (so DiSNI finds the bundled libdisni).
 *
 * <p>Resources: one RDMA-CM event channel and listening id bound to the RDMA netdev's IP;
 * one protection domain for every registration; one receive pool; a fixed set of
 * {@link CompletionWorker}s; per peer spark.shuffle.rdma.verbs.queuePairsPerPeer RC queue
 * pairs (1 on software devices), each with its own small CQ (so a CQ can never overflow and
 * one queue pair's failure stays its own). The CM thread owns all cm ids.
 *
 * <p>RDMA READ depth: every connection negotiates it explicitly ({@link ReadDepth}): the
 * reader offers its device's max_qp_init_rd_atom as initiator_depth, the server grants at
 * most its max_qp_rd_atom as responder_resources, and the reader's channel keeps no more
 * READs than the lesser posted on that queue pair.
 *
 * <p>With spark.authenticate=true every connection is mutually authenticated in the
 * RDMA-CM private data ({@link ConnectAuth}): a request without a valid MAC is rejected
 * before a queue pair exists for it, and a reply without the server's proof fails the
 * connection before any read is posted; both count in {@code connectionsRejected}.
 */
public final class VerbsTransport implements ShuffleTransport {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);
  private static final int RESOLVE_TIMEOUT_MS = 2000;
  private static final int MIN_DEPTH = 16;
  /** RC transport and RNR retry counts (the maximum, 7) for every connection. */
  private static final int RETRY = 7;

  private final TransportSettings settings;
  private final TransportStats stats = new TransportStats(true);
  private final RdmaEventChannel eventChannel;
  private final RdmaCmId listenId;
  private final IbvContext context;
  private final long contextHandle;
  private final IbvPd pd;
  private final ReceivePool pool;
  private final CompletionWorker[] workers;
  /** Runs read callbacks, so completion threads only poll. */
  private final ThreadPoolExecutor callbacks;
  private final CmEventLoop cm;
  private final PeerAddress localAddress;
  private final String bindIp;
  private final AtomicInteger nextWorker = new AtomicInteger();
  private final MapModeChoice mapChoice;
  private volatile MapModeChoice.Mode mapMode;
  /** Map outputs are registered with IBV_ACCESS_ON_DEMAND: nothing pinned. */
  private final boolean odp;
  /** Connection authentication; null without spark.authenticate. */
  private final ConnectAuth auth;
  /** This device's READ depth maxima, from ibv_query_device. */
  private final ReadDepth.Device device;
  /** Queue pairs (lanes) this executor opens to each peer. */
  private final int queuePairsPerPeer;

  private final Object connectLock = new Object();
  private final Map<QpKey, VerbsChannel> channels = new HashMap<>(); // connectLock
  private final Map<QpKey, CompletableFuture<VerbsChannel>> connecting = new HashMap<>();
  /** With more than one queue pair per peer: the shared striped channel of each peer. */
  private final Map<PeerAddress, StripedChannel> stripes = new HashMap<>(); // connectLock
  private final Set<VerbsChannel> allOutbound = ConcurrentHashMap.newKeySet();
  private final Set<InboundConnection> inbound = ConcurrentHashMap.newKeySet();
  private final Set<VerbsRegion> regions = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * @param bindIp the IPv4 of the RDMA netdev (chosen by PortSelector)
   * @param portId the RDMA port that address belongs to, for messages
   */
  public VerbsTransport(TransportSettings settings, String bindIp, String portId)
      throws IOException {
    this.settings = settings;
    this.bindIp = bindIp;
    this.mapChoice = MapModeChoice.choose(settings.conf().verbsMapMode(),
        System.getProperty("os.version"));
    this.mapMode = mapChoice.mode;
    this.auth = settings.authenticate() ? connectAuth(settings) : null;
    List<Runnable> undo = new ArrayList<>();
    try {
      eventChannel = RdmaEventChannel.createEventChannel();
      if (eventChannel == null) {
        throw new IOException("rdma_create_event_channel failed");
      }
      undo.add(() -> quietly(eventChannel::destroyEventChannel));
      listenId = eventChannel.createId(RdmaCm.RDMA_PS_TCP);
      undo.add(0, () -> quietly(listenId::destroyId));
      try {
        listenId.bindAddr(new InetSocketAddress(InetAddress.getByName(bindIp),
            settings.conf().port()));
      } catch (IOException e) {
        throw new IOException("cannot bind RDMA-CM to " + bindIp + ":" + settings.conf().port()
            + " (" + e.getMessage() + "); the address must belong to the netdev of " + portId
            + ", and the port must be free (spark.shuffle.rdma.bindAddress / port)", e);
      }
      listenId.listen(1024);
      context = listenId.getVerbs();
      contextHandle = ((NatObject) context).getObjId();
      device = ReadDepth.Device.decode(CmNative.queryReadDepths(contextHandle));
      try {
        queuePairsPerPeer = QueuePairStriping.perPeer(settings.conf().verbsQueuePairsPerPeer(),
            portId.contains(":") ? portId.substring(0, portId.indexOf(':')) : portId,
            device.vendorId);
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      stats.queuePairsPerPeer.set(queuePairsPerPeer);
      int odpCaps;
      try {
        odpCaps = context.queryOdpSupport();
      } catch (IOException e) {
        odpCaps = -1;
      }
      try {
        odp = OdpChoice.use(settings.conf().verbsOdp(), odpCaps);
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      pd = context.allocPd();
      undo.add(0, () -> quietly(pd::deallocPd));
      pool = new ReceivePool(pd, settings.conf().verbsReceivePoolSize());
      undo.add(0, () -> quietly(pool::deregister));
      workers = new CompletionWorker[settings.conf().verbsCompletionThreads()];
      for (int i = 0; i < workers.length; i++) {
        CompletionWorker w = new CompletionWorker(context, this, "rdma-completions-" + i);
        workers[i] = w;
        undo.add(0, w::destroy);
      }
      int port = ((InetSocketAddress) listenId.getSource()).getPort();
      this.localAddress = new PeerAddress(bindIp, port);
      this.callbacks = callbackExecutor(callbackThreads(settings.numUsableCores()),
          "rdma-callbacks-" + port + "-");
      this.cm = new CmEventLoop(eventChannel, this::accept, "rdma-cm-" + port);
    } catch (IOException | RuntimeException e) {
      for (Runnable r : undo) {
        r.run();
      }
      throw e;
    }
    for (CompletionWorker w : workers) {
      w.start();
    }
    cm.start();
    LOG.info("verbs transport on {} ({}), receive pool {} bytes, {} completion threads",
        localAddress, portId, pool.capacity(), workers.length);
    LOG.info("verbs: map outputs are mapped {}; registered {}", mapChoice, odp
        ? "with on-demand paging (nothing pinned)" : "pinned (no on-demand paging)");
    LOG.info("verbs: {}; {} queue pair(s) per peer (spark.shuffle.rdma.verbs.queuePairsPerPeer="
        + "{}), each keeping at most its negotiated READ depth posted", device, queuePairsPerPeer,
        settings.conf().verbsQueuePairsPerPeer());
    LOG.info("verbs: connections are {}", auth != null ? "authenticated with the application "
        + "secret (spark.authenticate)" : "not authenticated (spark.authenticate is off)");
  }

  private static ConnectAuth connectAuth(TransportSettings settings) throws IOException {
    try {
      return new ConnectAuth(settings.securityManager().getSecretKey(), settings.appId(),
          System::currentTimeMillis);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  /** Threads running read callbacks: the executor's cores, at least 2, at most 8. */
  static int callbackThreads(int cores) {
    return Math.max(2, Math.min(8, cores));
  }

  /**
   * A fixed number of named daemon threads. Its queue holds completed reads whose callbacks
   * have not run yet; each holds its receive-pool memory (successes) or its slot was already
   * released (failures), so the pool and the reads in flight bound it.
   */
  private static ThreadPoolExecutor callbackExecutor(int threads, String prefix) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor e = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, prefix + n.getAndIncrement());
          t.setDaemon(true);
          return t;
        });
    e.allowCoreThreadTimeOut(true);
    return e;
  }

  /**
   * Runs a read callback off the completion thread. After close, when the executor is
   * gone, the caller runs it (only failure callbacks of reads the close ended remain then).
   */
  void dispatch(Runnable callback) {
    try {
      callbacks.execute(callback);
    } catch (RejectedExecutionException e) {
      callback.run();
    }
  }

  TransportSettings settings() {
    return settings;
  }

  ReceivePool pool() {
    return pool;
  }

  int resolveTimeoutMs() {
    return RESOLVE_TIMEOUT_MS;
  }

  @Override
  public String name() {
    return "verbs";
  }

  /** The mode chosen per kernel at startup, or PRIVATE once registering that failed. */
  @Override
  public FileChannel.MapMode registrationMapMode() {
    return mapMode.fileMode;
  }

  /**
   * In auto, a shared mapping the kernel refused to pin falls back to PRIVATE (copies),
   * once, logged; an explicitly configured mode never changes.
   */
  @Override
  public FileChannel.MapMode registrationFallback(FileChannel.MapMode failed, IOException why) {
    if (!mapChoice.mayFallBack || failed == FileChannel.MapMode.PRIVATE) {
      return null;
    }
    synchronized (this) {
      if (mapMode != MapModeChoice.Mode.PRIVATE) {
        mapMode = MapModeChoice.Mode.PRIVATE;
        LOG.warn("verbs: registering a {} mapping failed ({}); map outputs are mapped PRIVATE "
            + "from now on: the kernel pins a private copy of every page (see "
            + "transport.pinnedCopiedBytes and spark.shuffle.rdma.verbs.mapMode)",
            failed, why.getMessage());
      }
    }
    return FileChannel.MapMode.PRIVATE;
  }

  @Override
  public PeerAddress localAddress() {
    return localAddress;
  }

  @Override
  public TransportStats stats() {
    return stats;
  }

  // ---- serving side: registration ----

  @Override
  public RegisteredRegion register(ByteBuffer memory) throws IOException {
    return register(memory, false);
  }

  /** A PRIVATE file mapping is pinned as private copies: counted in pinnedCopiedBytes. */
  @Override
  public RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs) throws IOException {
    return register(memory, mappedAs == FileChannel.MapMode.PRIVATE && !odp);
  }

  private RegisteredRegion register(ByteBuffer memory, boolean copied) throws IOException {
    if (closed) {
      throw new IOException("verbs transport is closed");
    }
    if (!memory.isDirect()) {
      throw new IllegalArgumentException("only direct or mapped buffers can be registered");
    }
    int length = memory.limit();
    if (length <= 0 || length > (1 << 30)) {
      throw new IllegalArgumentException("region length must be in [1, 1 GiB]: " + length);
    }
    long address = MemoryUtils.getAddress(memory);
    SVCRegMr reg;
    try {
      // Remote READ only; with ODP the device faults pages in instead of the kernel pinning.
      reg = pd.regMr(address, length, IbvMr.IBV_ACCESS_REMOTE_READ
          | (odp ? OdpChoice.ACCESS_ON_DEMAND : 0)).execute();
    } catch (IOException e) {
      throw new IOException("registering " + length + " bytes for RDMA READ failed: "
          + e.getMessage() + " (usually the locked-memory limit: set memlock to unlimited for "
          + "the executor, see 'java -jar shuffle-rdma.jar doctor')", e);
    }
    IbvMr mr = reg.getMr();
    reg.free();
    VerbsRegion region = new VerbsRegion(address, length, mr, copied);
    regions.add(region);
    stats.regionsRegistered.incrementAndGet();
    stats.bytesRegistered.addAndGet(length);
    if (copied) {
      stats.pinnedCopiedBytes.addAndGet(length);
    }
    return region;
  }

  /**
   * Deregisters at once: after ibv_dereg_mr returns the device no longer reads the memory
   * and new READs with the rkey fail with IBV_WC_REM_ACCESS_ERR at the reader.
   */
  @Override
  public CompletableFuture<Void> deregister(RegisteredRegion region) {
    VerbsRegion r = (VerbsRegion) region;
    if (!r.kill()) {
      return CompletableFuture.completedFuture(null);
    }
    regions.remove(r);
    stats.regionsRegistered.decrementAndGet();
    stats.bytesRegistered.addAndGet(-r.length());
    if (r.copied) {
      stats.pinnedCopiedBytes.addAndGet(-r.length());
    }
    try {
      r.mr.deregMr().execute().free();
      return CompletableFuture.completedFuture(null);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ---- reading side: connections ----

  /**
   * The channel to {@code peer}: its one queue pair, or with several per peer a
   * {@link StripedChannel} over all of them, shared until one of its lanes broke (then a new
   * one reuses the lanes that still work and waits for the replacement of the broken one).
   */
  @Override
  public TransportChannel connect(PeerAddress peer) throws IOException {
    if (queuePairsPerPeer == 1) {
      return await(connectAsync(peer, 0), peer);
    }
    synchronized (connectLock) {
      StripedChannel s = stripes.get(peer);
      if (s != null && s.isActive()) {
        return s;
      }
    }
    List<CompletableFuture<VerbsChannel>> pending = new ArrayList<>(queuePairsPerPeer);
    for (int lane = 0; lane < queuePairsPerPeer; lane++) {
      pending.add(connectAsync(peer, lane));
    }
    VerbsChannel[] lanes = new VerbsChannel[queuePairsPerPeer];
    for (int lane = 0; lane < lanes.length; lane++) {
      lanes[lane] = await(pending.get(lane), peer);
    }
    synchronized (connectLock) {
      StripedChannel s = stripes.get(peer);
      if (s == null || !s.isActive() || !s.uses(lanes)) {
        s = new StripedChannel(peer, lanes);
        stripes.put(peer, s);
      }
      return s;
    }
  }

  private static VerbsChannel await(CompletableFuture<VerbsChannel> f, PeerAddress peer)
      throws IOException {
    try {
      return f.get();
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof IOException ? (IOException) c : new IOException(c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while connecting to " + peer, e);
    }
  }

  /**
   * The active channel on queue pair {@code lane} to {@code peer}, or the attempt to make one
   * (shared by concurrent callers). Never blocks, so a completion path can start a
   * replacement connection for the one lane that broke; the attempt fails after
   * spark.shuffle.rdma.connectTimeout.
   */
  CompletableFuture<VerbsChannel> connectAsync(PeerAddress peer, int lane) {
    QpKey key = new QpKey(peer, lane);
    synchronized (connectLock) {
      if (closed) {
        return CompletableFuture.failedFuture(new IOException("verbs transport is closed"));
      }
      VerbsChannel ch = channels.get(key);
      if (ch != null && ch.isActive()) {
        return CompletableFuture.completedFuture(ch);
      }
      CompletableFuture<VerbsChannel> pending = connecting.get(key);
      if (pending != null) {
        return pending;
      }
      CompletableFuture<VerbsChannel> raw = new CompletableFuture<>();
      CompletableFuture<VerbsChannel> result = new CompletableFuture<>();
      AtomicReference<VerbsChannel> started = new AtomicReference<>();
      connecting.put(key, result);
      long timeoutMs = settings.conf().connectTimeoutMs();
      raw.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).whenComplete((c, err) -> {
        IOException failure = null;
        if (err != null) {
          Throwable e = err instanceof CompletionException && err.getCause() != null
              ? err.getCause() : err;
          failure = e instanceof TimeoutException
              ? new IOException("RDMA connect to " + peer + " timed out after " + timeoutMs
                  + " ms (spark.shuffle.rdma.connectTimeout)")
              : e instanceof IOException ? (IOException) e : new IOException(e);
          if (e instanceof TimeoutException) {
            IOException te = failure;
            cm.submit(() -> {
              VerbsChannel s = started.get();
              if (s != null) {
                s.fail(te);
              }
            });
          }
        }
        synchronized (connectLock) {
          connecting.remove(key, result);
          if (failure == null) {
            channels.put(key, c);
            stats.connectionsOpened.incrementAndGet();
          }
        }
        if (failure == null) {
          result.complete(c);
        } else {
          result.completeExceptionally(failure);
        }
      });
      cm.submit(() -> startConnect(peer, lane, raw, started));
      return result;
    }
  }

  /** CM thread: create the id, bind it to our RDMA address, start resolving. */
  private void startConnect(PeerAddress peer, int lane, CompletableFuture<VerbsChannel> done,
      AtomicReference<VerbsChannel> started) {
    if (closed) {
      done.completeExceptionally(new IOException("verbs transport is closed"));
      return;
    }
    RdmaCmId id;
    try {
      id = eventChannel.createId(RdmaCm.RDMA_PS_TCP);
    } catch (IOException e) {
      done.completeExceptionally(e);
      return;
    }
    // No more send-queue entries than READs the QP may have outstanding.
    VerbsChannel ch = new VerbsChannel(this, peer, lane, id, workers[Math.floorMod(
        nextWorker.getAndIncrement(), workers.length)], done,
        ReadDepth.window(settings.conf().maxReadsInFlightPerPeer(), ReadDepth.offer(device)));
    started.set(ch);
    allOutbound.add(ch);
    cm.register(id, ch);
    try {
      // Binding the source address keeps the connection on the chosen RDMA device.
      id.bindAddr(new InetSocketAddress(InetAddress.getByName(bindIp), 0));
      id.resolveAddr(null, new InetSocketAddress(InetAddress.getByName(peer.host()),
          peer.port()), RESOLVE_TIMEOUT_MS);
    } catch (IOException e) {
      ch.fail(new IOException("RDMA connect to " + peer + " failed: " + e.getMessage(), e));
    }
  }

  /** CM thread, on ROUTE_RESOLVED: this channel's CQ and RC QP, sized to its depth. */
  void createQueuePair(VerbsChannel ch) throws IOException {
    IbvContext ctx = ch.id.getVerbs();
    if (((NatObject) ctx).getObjId() != contextHandle) {
      throw new IOException("peer " + ch.peer() + " is reachable only through another RDMA "
          + "device than the one bound to " + bindIp + "; check routes or "
          + "spark.shuffle.rdma.device / bindAddress");
    }
    IOException last = null;
    for (int depth = ch.depth(); depth >= MIN_DEPTH || depth == ch.depth(); depth /= 2) {
      IbvCQ cq = ctx.createCQ(ch.worker.compChannel(), depth + 1, 0);
      try {
        ch.cq = cq;
        ch.qp = ch.id.createQP(pd, qpAttr(cq, depth, 1));
        ch.setDepth(depth);
        return;
      } catch (IOException e) {
        last = e;
        ch.cq = null;
        quietly(cq::destroyCQ);
      }
      if (depth <= MIN_DEPTH) {
        break;
      }
    }
    throw new IOException("creating an RC queue pair to " + ch.peer() + " failed: "
        + (last != null ? last.getMessage() : "?") + " (lower spark.shuffle.rdma."
        + "maxReadsInFlightPerPeer)", last);
  }

  private static IbvQPInitAttr qpAttr(IbvCQ cq, int sendDepth, int recvDepth) {
    IbvQPInitAttr attr = new IbvQPInitAttr();
    attr.cap().setMax_send_wr(sendDepth);
    attr.cap().setMax_recv_wr(recvDepth);
    attr.cap().setMax_send_sge(1);
    attr.cap().setMax_recv_sge(1);
    attr.cap().setMax_inline_data(0);
    attr.setQp_type(IbvQP.IBV_QPT_RC);
    attr.setSend_cq(cq);
    attr.setRecv_cq(cq);
    return attr;
  }

  /**
   * CM thread, on ROUTE_RESOLVED after the QP exists: sends the connection request, offering
   * this device's max_qp_init_rd_atom as initiator_depth (and no responder resources: nobody
   * reads from us on this QP), with the authentication request as its private data when
   * spark.authenticate is on.
   */
  void connect(VerbsChannel ch) throws IOException {
    ch.offeredReadDepth = ReadDepth.offer(device);
    if (auth != null) {
      ch.authServer = ConnectAuth.endpoint((InetSocketAddress) ch.id.getDestination());
      ch.authQpn = ch.qp.getQp_num();
      ch.authRequest = auth.request(ch.authServer, ch.authQpn);
    }
    CmNative.connect(handle(ch.id), RETRY, RETRY, ch.offeredReadDepth, 0, ch.authRequest);
  }

  /**
   * CM thread, on ESTABLISHED: the READ depth of this connection, the lesser of what we
   * offered and what the server granted; logged at debug, kept in the readDepth gauge.
   */
  int negotiatedReadDepth(VerbsChannel ch, CmConnectData data) {
    int granted = data == null ? 0 : ReadDepth.peerFigure(data.readDepths);
    int depth = ReadDepth.negotiated(ch.offeredReadDepth, granted);
    stats.readDepth.set(depth);
    LOG.debug("verbs: connection to {} queue pair {}: READ depth {} (offered {}, granted {}, "
        + "event depths 0x{}), {} posted at most", ch.peer(), ch.lane, depth,
        ch.offeredReadDepth, granted, Integer.toHexString(data == null ? 0 : data.readDepths),
        ReadDepth.window(ch.depth(), depth));
    return depth;
  }

  /** This device's READ depth maxima (for tests and logs). */
  ReadDepth.Device device() {
    return device;
  }

  /**
   * CM thread, on ESTABLISHED: whether the server proved it knows the secret (always true
   * without spark.authenticate). A failed proof is counted; the caller fails the channel.
   */
  boolean serverProved(VerbsChannel ch, CmConnectData data) {
    if (auth == null) {
      return true;
    }
    boolean ok = data != null && ch.authRequest != null && auth.checkReply(ch.authRequest,
        data.privateData, data.length, ch.authServer, ch.authQpn, data.peerQpNum);
    if (!ok) {
      stats.connectionsRejected.incrementAndGet();
      LOG.warn("refusing RDMA connection to {}: the server did not prove it knows the "
          + "application secret", ch.peer());
    }
    return ok;
  }

  private static long handle(RdmaCmId id) {
    return ((NatObject) id).getObjId();
  }

  /**
   * CM thread, on CONNECT_REQUEST: a peer wants to READ from us. With spark.authenticate
   * its request is verified first; a refused one is rejected before any QP exists for it.
   */
  private void accept(RdmaCmId id, CmConnectData data) {
    if (id == null) {
      return;
    }
    byte[] server = null;
    if (auth != null) {
      String refusal;
      try {
        server = ConnectAuth.endpoint((InetSocketAddress) id.getSource());
        refusal = auth.checkRequest(data.privateData, data.length, server, data.peerQpNum);
      } catch (IOException | RuntimeException e) {
        refusal = "cannot check it: " + e;
      }
      if (refusal != null) {
        stats.connectionsRejected.incrementAndGet();
        LOG.warn("rejected RDMA connection request from {}: {}", peerOf(id), refusal);
        CmNative.reject(handle(id));
        quietly(id::destroyId);
        return;
      }
    }
    IbvCQ cq = null;
    try {
      if (closed) {
        throw new IOException("closed");
      }
      IbvContext ctx = id.getVerbs();
      if (((NatObject) ctx).getObjId() != contextHandle) {
        throw new IOException("connection request arrived on another RDMA device");
      }
      // The responder side posts nothing: a minimal CQ and QP suffice.
      cq = ctx.createCQ(workers[0].compChannel(), 2, 0);
      IbvQP qp = id.createQP(pd, qpAttr(cq, 1, 1));
      InboundConnection in = new InboundConnection(this, id, cq);
      cm.register(id, in);
      inbound.add(in);
      // Serve as many READs at once as the reader asked for, at most our max_qp_rd_atom.
      int requested = data == null ? 0 : ReadDepth.peerFigure(data.readDepths);
      int granted = ReadDepth.grant(requested, device);
      LOG.debug("verbs: accepting {}: READ depth requested {}, granted {}", peerOf(id),
          requested, granted);
      CmNative.accept(handle(id), RETRY, RETRY, 0, granted, auth == null ? null
          : auth.reply(data.privateData, server, data.peerQpNum, qp.getQp_num()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("refusing RDMA connection request: {}", e.toString());
      IbvCQ c = cq;
      quietly(id::destroyQP);
      if (c != null) {
        quietly(c::destroyCQ);
      }
      quietly(id::destroyId);
    }
  }

  private static String peerOf(RdmaCmId id) {
    try {
      return String.valueOf(id.getDestination());
    } catch (IOException | RuntimeException e) {
      return "an unknown peer";
    }
  }

  void forgetInbound(InboundConnection in) {
    inbound.remove(in);
    cm.unregister(in.id);
  }

  /** Moves the channel's QP to error (its posted reads come back flushed). */
  void disconnect(VerbsChannel ch) {
    cm.submit(() -> quietly(ch.id::disconnect));
  }

  /** Frees a channel's QP, CQ and id on the CM thread, then fails what never completed. */
  void destroyOutbound(VerbsChannel ch) {
    if (!ch.markDestroying()) {
      return;
    }
    cm.submit(() -> destroyNow(ch));
  }

  private void destroyNow(VerbsChannel ch) {
    if (ch.qp != null) {
      quietly(ch.id::destroyQP);
    }
    if (ch.cq != null) {
      quietly(ch.cq::destroyCQ);
    }
    quietly(ch.id::destroyId);
    cm.unregister(ch.id);
    allOutbound.remove(ch);
    synchronized (connectLock) {
      channels.remove(new QpKey(ch.peer(), ch.lane), ch);
    }
    ch.failRemaining();
  }

  /** Runs a short task off the caller's locks (on the CM thread). */
  void runLater(Runnable task) {
    cm.submit(task);
  }

  /** Number of registered regions not yet deregistered (for leak checks). */
  public int liveRegions() {
    return regions.size();
  }

  @Override
  public void close() {
    synchronized (connectLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    IOException cause = new IOException("verbs transport closed");
    for (VerbsChannel ch : allOutbound) {
      ch.fail(cause);
    }
    Set<CompletionWorker> running = new HashSet<>();
    boolean cmRunning = false;
    try {
      cmRunning = !cm.stop();
      for (CompletionWorker w : workers) {
        if (!w.stop()) {
          running.add(w);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running.addAll(java.util.Arrays.asList(workers));
      cmRunning = true;
    }
    if (cmRunning || !running.isEmpty()) {
      // A CQ destroyed under a thread that polls it is a use-after-free in the provider:
      // leak the device resources instead (the process is usually exiting anyway).
      LOG.error("verbs transport close: {} still running after 10 s; leaking its queue "
          + "pairs, completion queues, receive pool and protection domain rather than freeing "
          + "them under a running thread", cmRunning ? "the RDMA-CM thread" : running.size()
          + " completion thread(s)");
      for (VerbsChannel ch : allOutbound) {
        if (!running.contains(ch.worker) && !cmRunning) {
          ch.markDestroying();
          quietly(ch.id::disconnect);
          destroyNow(ch);
        }
      }
      shutdownCallbacks();
      return;
    }
    // No thread uses DiSNI any more: tear down QPs before CQs, MRs before the PD.
    for (VerbsChannel ch : allOutbound) {
      ch.markDestroying();
      quietly(ch.id::disconnect);
      destroyNow(ch);
    }
    for (InboundConnection in : new ArrayList<>(inbound)) {
      in.destroy();
    }
    for (VerbsRegion r : new ArrayList<>(regions)) {
      deregister(r);
    }
    // Callbacks of failed reads release their pool memory before the pool goes.
    shutdownCallbacks();
    quietly(pool::deregister);
    quietly(pd::deallocPd);
    quietly(listenId::destroyId);
    for (CompletionWorker w : workers) {
      w.destroy();
    }
    quietly(eventChannel::destroyEventChannel);
  }

  private void shutdownCallbacks() {
    callbacks.shutdown();
    try {
      if (!callbacks.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("verbs transport close: read callbacks still running after 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }


  /** One queue pair to one peer: the key of a channel. */
  private static final class QpKey {
    final PeerAddress peer;
    final int lane;

    QpKey(PeerAddress peer, int lane) {
      this.peer = peer;
      this.lane = lane;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof QpKey && ((QpKey) o).peer.equals(peer) && ((QpKey) o).lane == lane;
    }

    @Override
    public int hashCode() {
      return peer.hashCode() * 31 + lane;
    }
  }

  /** A teardown step whose failure must not stop the rest. */
  interface Step {
    void run() throws Exception;
  }

  static void quietly(Step step) {
    try {
      step.run();
    } catch (Exception e) {
      LOG.debug("teardown step failed", e);
    }
  }
}
