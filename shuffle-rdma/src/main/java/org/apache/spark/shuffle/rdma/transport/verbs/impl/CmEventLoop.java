/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiConsumer;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns the RDMA-CM event channel and every cm id on it: it creates ids,
 * resolves, connects, accepts, disconnects and destroys them, and dispatches their events.
 * Other threads hand it work with {@link #submit}. One owner is required because DiSNI's
 * event channel keeps its id table in an unsynchronized map.
 */
final class CmEventLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(CmEventLoop.class);
  private static final int POLL_MS = 20;

  private final RdmaEventChannel channel;
  private final BiConsumer<RdmaCmId, CmConnectData> onConnectRequest;
  private final Map<RdmaCmId, CmHandler> handlers = new HashMap<>(); // CM thread only
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Thread thread;
  private volatile boolean running = true;
  /** Runs on this thread after each wait for events (at most POLL_MS apart). */
  private volatile Runnable tick = () -> { };

  CmEventLoop(RdmaEventChannel channel, BiConsumer<RdmaCmId, CmConnectData> onConnectRequest,
      String name) {
    this.channel = channel;
    this.onConnectRequest = onConnectRequest;
    this.thread = new Thread(this, name);
    this.thread.setDaemon(true);
  }

  /** Work to run on this thread every POLL_MS or so (set before {@link #start}). */
  void onTick(Runnable work) {
    this.tick = work;
  }

  void start() {
    thread.start();
  }

  void submit(Runnable task) {
    tasks.add(task);
  }

  /** CM thread only. */
  void register(RdmaCmId id, CmHandler handler) {
    handlers.put(id, handler);
  }

  /** CM thread only. */
  void unregister(RdmaCmId id) {
    handlers.remove(id);
  }

  @Override
  public void run() {
    while (running) {
      runTasks();
      RdmaCmEvent event;
      try {
        event = channel.getCmEvent(POLL_MS);
      } catch (IOException e) {
        if (running) {
          LOG.error("RDMA-CM event channel failed; no new connections possible", e);
        }
        return;
      }
      if (event != null) {
        dispatch(event);
      }
      try {
        tick.run();
      } catch (RuntimeException e) {
        LOG.warn("RDMA-CM tick failed", e);
      }
    }
    runTasks();
  }

  private void runTasks() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.warn("RDMA-CM task failed", e);
      }
    }
  }

  private void dispatch(RdmaCmEvent event) {
    RdmaCmEvent.EventType[] types = RdmaCmEvent.EventType.values();
    int ordinal = event.getEvent();
    if (ordinal < 0 || ordinal >= types.length) {
      return;
    }
    RdmaCmEvent.EventType type = types[ordinal];
    RdmaCmId id = event.getConnIdPriv();
    // The native layer keeps these for the event this thread fetched last: read them now.
    CmConnectData data = type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED
        ? CmConnectData.ofLastEvent() : null;
    if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST) {
      onConnectRequest.accept(id, data);
      return;
    }
    CmHandler h = id == null ? null : handlers.get(id);
    if (h == null) {
      LOG.debug("RDMA-CM event {} for an id without handler", type);
      return;
    }
    try {
      h.onCmEvent(type, data);
    } catch (IOException | RuntimeException e) {
      h.onCmFailure(e instanceof IOException ? (IOException) e
          : new IOException("RDMA-CM handling of " + type + " failed: " + e, e));
    }
  }

  /** Stops the thread after the queued tasks ran; waits up to 10 s. True once it ended. */
  boolean stop() throws InterruptedException {
    running = false;
    thread.join(10_000);
    return !thread.isAlive();
  }
}
