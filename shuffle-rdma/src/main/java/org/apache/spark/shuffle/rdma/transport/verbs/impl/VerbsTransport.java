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
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.impl.NatObject;
import org.apache.spark.shuffle.rdma.config.RdmaConf;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectAuth;
import org.apache.spark.shuffle.rdma.transport.verbs.ConnectGate;
import org.apache.spark.shuffle.rdma.transport.verbs.InboundQuota;
import org.apache.spark.shuffle.rdma.transport.verbs.QueuePairStriping;
import org.apache.spark.shuffle.rdma.transport.verbs.ReadDepth;
import org.apache.spark.shuffle.rdma.transport.verbs.TrafficClass;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RDMA READ through DiSNI's verbs API. Created by VerbsTransportProvider through the
 * isolated class loader (so DiSNI finds the bundled libdisni).
 *
 * <p>This class only opens the device, wires the roles together and closes them in order,
 * the way Spark's TransportContext wires a client factory and a server:
 * <ul>
 *   <li>{@link VerbsMemory}: the protection domain, the receive pool, and every map output
 *       registered for remote READ;</li>
 *   <li>{@link VerbsConnector}: the queue pairs this executor reads through (per peer
 *       spark.shuffle.rdma.verbs.queuePairsPerPeer, 1 on software devices), each a
 *       {@link VerbsChannel} with its own small CQ, so a CQ never overflows and one queue
 *       pair's failure stays its own;</li>
 *   <li>{@link VerbsAcceptor}: the queue pairs peers read this executor through;</li>
 *   <li>{@link CmEventLoop}: the one thread that owns the RDMA-CM event channel and every
 *       cm id;</li>
 *   <li>{@link CompletionAgent}s: a fixed set of threads that only poll CQs;</li>
 *   <li>{@link CallbackDispatcher}: the threads read callbacks run on.</li>
 * </ul>
 *
 * <p>RDMA READ depth: every connection negotiates it explicitly ({@link ReadDepth}): the
 * reader offers its device's max_qp_init_rd_atom as initiator_depth, the server grants at
 * most its max_qp_rd_atom as responder_resources, and the reader's channel keeps no more
 * READs than the lesser posted on that queue pair.
 *
 * <p>With spark.authenticate=true every connection is mutually authenticated in the
 * RDMA-CM private data ({@link ConnectAuth}): a request without a valid MAC is rejected
 * before a queue pair exists for it, and a reply without the server's proof fails the
 * connection before any read is posted; both count in {@code connectionsRejected}. With or
 * without it, the server holds at most spark.shuffle.rdma.verbs.maxInboundQueuePairs queue
 * pairs for peers, and at most ...PerAddress for one peer address ({@link ConnectGate}).
 */
public final class VerbsTransport implements ShuffleTransport {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);

  private final TransportStats stats = new TransportStats(true);
  private final RdmaEventChannel eventChannel;
  private final RdmaCmId listenId;
  private final VerbsMemory memory;
  private final CompletionAgent[] agents;
  private final CallbackDispatcher callbacks;
  private final CmEventLoop cm;
  private final VerbsConnector connector;
  private final VerbsAcceptor acceptor;
  private final PeerAddress localAddress;
  private final Object closeLock = new Object();
  private boolean closed; // closeLock

  /**
   * @param bindIp the IPv4 of the RDMA netdev (chosen by PortSelector)
   * @param portId the RDMA port that address belongs to, for messages
   */
  public VerbsTransport(TransportSettings settings, String bindIp, String portId)
      throws IOException {
    ConnectAuth auth = settings.authenticate() ? connectAuth(settings) : null;
    List<Runnable> undo = new ArrayList<>();
    ReadDepth.Device device;
    int queuePairsPerPeer;
    try {
      eventChannel = RdmaEventChannel.createEventChannel();
      if (eventChannel == null) {
        throw new IOException("rdma_create_event_channel failed");
      }
      undo.add(() -> quietly(eventChannel::destroyEventChannel));
      listenId = eventChannel.createId(RdmaCm.RDMA_PS_TCP);
      undo.add(0, () -> quietly(listenId::destroyId));
      // Responses follow the class the reader's REQ asked for; set here too so that every
      // id this transport owns carries the configured class (and ids the kernel derives from
      // the listening one inherit it).
      setTrafficClass(listenId, settings.conf().verbsTrafficClass());
      try {
        listenId.bindAddr(new InetSocketAddress(InetAddress.getByName(bindIp),
            settings.conf().port()));
      } catch (IOException e) {
        throw new IOException("cannot bind RDMA-CM to " + bindIp + ":" + settings.conf().port()
            + " (" + e.getMessage() + "); the address must belong to the netdev of " + portId
            + ", and the port must be free (spark.shuffle.rdma.bindAddress / port)", e);
      }
      listenId.listen(1024);
      IbvContext context = listenId.getVerbs();
      long contextHandle = ((NatObject) context).getObjId();
      device = ReadDepth.Device.decode(CmNative.queryReadDepths(contextHandle));
      try {
        queuePairsPerPeer = QueuePairStriping.perPeer(settings.conf().verbsQueuePairsPerPeer(),
            portId.contains(":") ? portId.substring(0, portId.indexOf(':')) : portId,
            device.vendorId);
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      stats.queuePairsPerPeer.set(queuePairsPerPeer);
      memory = new VerbsMemory(context, settings.conf(), stats);
      undo.add(0, memory::free);
      int port = ((InetSocketAddress) listenId.getSource()).getPort();
      this.localAddress = new PeerAddress(bindIp, port);
      this.callbacks = new CallbackDispatcher(settings.numUsableCores(),
          "rdma-callbacks-" + port + "-");
      agents = new CompletionAgent[settings.conf().verbsCompletionThreads()];
      for (int i = 0; i < agents.length; i++) {
        CompletionAgent a = new CompletionAgent(context, "rdma-completions-" + i, callbacks,
            stats.readsFailed);
        agents[i] = a;
        undo.add(0, a::destroy);
      }
      // The CM thread starts after construction, so the acceptor exists by its first event.
      this.cm = new CmEventLoop(eventChannel, this::onConnectRequest, "rdma-cm-" + port);
      this.acceptor = new VerbsAcceptor(stats, cm, contextHandle, memory,
          agents[0].compChannel(), auth, new ConnectGate(auth, new InboundQuota(
              settings.conf().verbsMaxInboundQueuePairs(),
              settings.conf().verbsMaxInboundQueuePairsPerAddress())), device,
          settings.conf().verbsKeepaliveIntervalMs());
      cm.onTick(acceptor::sweep);
      this.connector = new VerbsConnector(settings.conf(), stats, eventChannel, cm,
          contextHandle, bindIp, memory, agents, callbacks, auth, device, queuePairsPerPeer);
    } catch (IOException | RuntimeException e) {
      for (Runnable r : undo) {
        r.run();
      }
      throw e;
    }
    for (CompletionAgent a : agents) {
      a.start();
    }
    cm.start();
    LOG.info("verbs transport on {} ({}), receive pool {} bytes, {} completion threads",
        localAddress, portId, memory.pool().capacity(), agents.length);
    LOG.info("verbs: {}", memory.describe());
    LOG.info("verbs: {}; {} queue pair(s) per peer (spark.shuffle.rdma.verbs.queuePairsPerPeer="
        + "{}), each keeping at most its negotiated READ depth posted", device, queuePairsPerPeer,
        settings.conf().verbsQueuePairsPerPeer());
    LOG.info("verbs: RoCE traffic class: {}",
        TrafficClass.describe(settings.conf().verbsTrafficClass(),
            RdmaConf.VERBS_TRAFFIC_CLASS().key()));
    LOG.info("verbs: connections are {}", auth != null ? "authenticated with the application "
        + "secret (spark.authenticate)" : "not authenticated (spark.authenticate is off)");
  }

  private void onConnectRequest(RdmaCmId id, CmConnectData data) {
    acceptor.accept(id, data);
  }

  private static ConnectAuth connectAuth(TransportSettings settings) throws IOException {
    try {
      // Each address may hold twice its queue pair share in fresh nonces: reconnects
      // within the replay window need room beyond the connections it holds at once.
      int perPeer = 2 * settings.conf().verbsMaxInboundQueuePairsPerAddress();
      return new ConnectAuth(settings.securityManager().getSecretKey(), settings.appId(),
          System::currentTimeMillis, perPeer, Math.max(ConnectAuth.NONCE_CACHE_ENTRIES,
              perPeer));
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  @Override
  public String name() {
    return "verbs";
  }

  @Override
  public FileChannel.MapMode registrationMapMode() {
    return memory.mapMode();
  }

  @Override
  public FileChannel.MapMode registrationFallback(FileChannel.MapMode failed, IOException why) {
    return memory.fallback(failed, why);
  }

  @Override
  public PeerAddress localAddress() {
    return localAddress;
  }

  @Override
  public TransportStats stats() {
    return stats;
  }

  @Override
  public RegisteredRegion register(ByteBuffer memory) throws IOException {
    return this.memory.register(memory, null);
  }

  /** A PRIVATE file mapping is pinned as private copies: counted in pinnedCopiedBytes. */
  @Override
  public RegisteredRegion register(ByteBuffer memory, BackingCheck backing,
      FileChannel.MapMode mappedAs) throws IOException {
    return this.memory.register(memory, mappedAs);
  }

  @Override
  public CompletableFuture<Void> deregister(RegisteredRegion region) {
    return memory.deregister(region);
  }

  @Override
  public TransportChannel connect(PeerAddress peer) throws IOException {
    return connector.connect(peer);
  }

  /** Number of registered regions not yet deregistered (for leak checks). */
  public int liveRegions() {
    return memory.liveRegions();
  }

  /**
   * Fails every outbound channel, stops the CM thread and the completion agents, then frees
   * queue pairs before CQs, memory registrations before the protection domain.
   */
  @Override
  public void close() {
    synchronized (closeLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    connector.close();
    acceptor.close();
    memory.close();
    Set<CompletionAgent> running = new HashSet<>();
    boolean cmRunning = false;
    try {
      cmRunning = !cm.stop();
      for (CompletionAgent a : agents) {
        if (!a.stop()) {
          running.add(a);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running.addAll(Arrays.asList(agents));
      cmRunning = true;
    }
    if (cmRunning || !running.isEmpty()) {
      // A CQ destroyed under a thread that polls it is a use-after-free in the provider:
      // leak the device resources instead (the process is usually exiting anyway).
      LOG.error("verbs transport close: {} still running after 10 s; leaking its queue "
          + "pairs, completion queues, receive pool and protection domain rather than freeing "
          + "them under a running thread", cmRunning ? "the RDMA-CM thread" : running.size()
          + " completion thread(s)");
      if (!cmRunning) {
        connector.destroyAll(a -> !running.contains(a));
      }
      callbacks.shutdown();
      return;
    }
    // No thread uses DiSNI any more: tear down QPs before CQs, MRs before the PD.
    connector.destroyAll(a -> true);
    acceptor.destroyAll();
    // Callbacks of failed reads release their pool memory before the pool goes.
    callbacks.shutdown();
    memory.free();
    quietly(listenId::destroyId);
    for (CompletionAgent a : agents) {
      a.destroy();
    }
    quietly(eventChannel::destroyEventChannel);
  }

  static long handle(RdmaCmId id) {
    return ((NatObject) id).getObjId();
  }

  /**
   * spark.shuffle.rdma.verbs.trafficClass on a cm id: the kernel reads it when it resolves
   * the route (and a listening id's when it listens), so this comes before either. Nothing
   * when unset (the device default applies).
   */
  static void setTrafficClass(RdmaCmId id, OptionalInt tos) throws IOException {
    if (tos.isEmpty()) {
      return;
    }
    try {
      CmNative.setTos(handle(id), tos.getAsInt());
    } catch (IOException e) {
      throw new IOException("cannot set the RoCE traffic class "
          + RdmaConf.VERBS_TRAFFIC_CLASS().key() + "="
          + tos.getAsInt() + ": " + e.getMessage() + " (unset it to keep the device default)",
          e);
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
