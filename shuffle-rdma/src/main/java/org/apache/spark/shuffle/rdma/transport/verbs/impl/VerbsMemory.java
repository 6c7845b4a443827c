/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.apache.spark.shuffle.rdma.transport.TransportStats;
import org.apache.spark.shuffle.rdma.transport.verbs.MapModeChoice;
import org.apache.spark.shuffle.rdma.transport.verbs.MappingRefusal;
import org.apache.spark.shuffle.rdma.transport.verbs.OdpChoice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one owner of the transport's memory on the device: the protection domain, the receive
 * pool READs land in, and every map output registered for remote READ. It decides how map
 * outputs are mapped (shared, or private copies) and registered (pinned, or on-demand
 * paging), and it alone registers and deregisters. Queue pairs are created in its protection
 * domain, so it is freed last, after every connection.
 */
final class VerbsMemory {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsMemory.class);
  /** The largest region one memory registration covers (map outputs are mapped in pieces). */
  private static final int MAX_REGION = 1 << 30;

  private final TransportStats stats;
  private final IbvPd pd;
  private final ReceivePool pool;
  private final MapModeChoice mapChoice;
  private volatile MapModeChoice.Mode mapMode;
  /** Map outputs are registered with IBV_ACCESS_ON_DEMAND: nothing pinned. */
  private final boolean odp;
  private final Set<VerbsRegion> regions = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Allocates the protection domain and registers the receive pool; frees both on failure. */
  VerbsMemory(IbvContext context, RdmaShuffleConf conf, TransportStats stats)
      throws IOException {
    this.stats = stats;
    this.mapChoice = MapModeChoice.choose(conf.verbsMapMode(), System.getProperty("os.version"));
    this.mapMode = mapChoice.mode;
    int odpCaps;
    try {
      odpCaps = context.queryOdpSupport();
    } catch (IOException e) {
      odpCaps = -1;
    }
    try {
      this.odp = OdpChoice.use(conf.verbsOdp(), odpCaps);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    this.pd = context.allocPd();
    try {
      this.pool = new ReceivePool(pd, conf.verbsReceivePoolSize());
    } catch (IOException | RuntimeException e) {
      VerbsTransport.quietly(pd::deallocPd);
      throw e;
    }
  }

  IbvPd pd() {
    return pd;
  }

  ReceivePool pool() {
    return pool;
  }

  /** For the start-up log line. */
  String describe() {
    return "map outputs are mapped " + mapChoice + "; registered " + (odp
        ? "with on-demand paging (nothing pinned)" : "pinned (no on-demand paging)");
  }

  /** SHARED at startup in auto, then the mode the kernel's refusals left (see fallback). */
  FileChannel.MapMode mapMode() {
    return mapMode.fileMode;
  }

  /**
   * In auto, a mapping the kernel refused to pin (EFAULT, see {@link MappingRefusal}) falls
   * back to the next mode (shared read-write, then private copies), logged; the kernel will
   * refuse the same for every output, so that mode is used from then on. Any other failure
   * (memlock, a closed transport) gets no fallback: null, and the registration fails. An
   * explicitly configured mode never changes.
   */
  FileChannel.MapMode fallback(FileChannel.MapMode failed, IOException why) {
    if (!mapChoice.mayFallBack) {
      return null;
    }
    MapModeChoice.Mode failedMode = modeOf(failed);
    MapModeChoice.Mode next = failedMode == null ? null
        : MappingRefusal.next(failedMode, why.getMessage());
    if (next == null) {
      return null;
    }
    synchronized (this) {
      if (mapMode.ordinal() < next.ordinal()) {
        mapMode = next;
        String text = "verbs: the kernel refused to pin a {} mapping ({}); map outputs are "
            + "mapped {} from now on{} (see spark.shuffle.rdma.verbs.mapMode)";
        String copies = next == MapModeChoice.Mode.PRIVATE
            ? ": the kernel pins a private copy of every page (transport.pinnedCopiedBytes)"
            : "";
        // Before 6.2 the shared read-only pin is refused by design: news only elsewhere.
        if (mapChoice.refusalExpected && failedMode == MapModeChoice.Mode.SHARED) {
          LOG.info(text, failedMode, why.getMessage(), next, copies);
        } else {
          LOG.warn(text, failedMode, why.getMessage(), next, copies);
        }
      }
    }
    return next.fileMode;
  }

  private static MapModeChoice.Mode modeOf(FileChannel.MapMode m) {
    for (MapModeChoice.Mode mode : MapModeChoice.Mode.values()) {
      if (mode.fileMode == m) {
        return mode;
      }
    }
    return null;
  }

  /**
   * Registers {@code memory} for remote READ only. {@code mappedAs}: how a file's pages
   * were mapped; a PRIVATE mapping without on-demand paging is pinned as private copies,
   * counted in pinnedCopiedBytes. Null for plain direct memory.
   */
  RegisteredRegion register(ByteBuffer memory, FileChannel.MapMode mappedAs)
      throws IOException {
    if (closed) {
      throw new IOException("verbs transport is closed");
    }
    if (!memory.isDirect()) {
      throw new IllegalArgumentException("only direct or mapped buffers can be registered");
    }
    int length = memory.limit();
    if (length <= 0 || length > MAX_REGION) {
      throw new IllegalArgumentException("region length must be in [1, 1 GiB]: " + length);
    }
    boolean copied = mappedAs == FileChannel.MapMode.PRIVATE && !odp;
    long address = MemoryUtils.getAddress(memory);
    SVCRegMr reg;
    try {
      // Remote READ only; with ODP the device faults pages in instead of the kernel pinning.
      reg = pd.regMr(address, length, IbvMr.IBV_ACCESS_REMOTE_READ
          | (odp ? OdpChoice.ACCESS_ON_DEMAND : 0)).execute();
    } catch (IOException e) {
      throw new IOException("registering " + length + " bytes for RDMA READ failed: "
          + e.getMessage() + (MappingRefusal.isPinRefusal(e.getMessage())
              ? " (the kernel refuses to pin this kind of mapping; see "
                  + "spark.shuffle.rdma.verbs.mapMode)"
              : " (usually the locked-memory limit: set memlock to unlimited for the "
                  + "executor, see 'java -jar shuffle-rdma.jar doctor')"), e);
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
  CompletableFuture<Void> deregister(RegisteredRegion region) {
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

  /** Registered regions not yet deregistered (for leak checks). */
  int liveRegions() {
    return regions.size();
  }

  /** Refuses new registrations; the memory stays until {@link #free}. */
  void close() {
    closed = true;
  }

  /**
   * After every queue pair in the protection domain is gone and no read callback runs any
   * more: map outputs, then the receive pool, then the protection domain.
   */
  void free() {
    for (VerbsRegion r : new ArrayList<>(regions)) {
      deregister(r);
    }
    VerbsTransport.quietly(pool::deregister);
    VerbsTransport.quietly(pd::deallocPd);
  }
}
