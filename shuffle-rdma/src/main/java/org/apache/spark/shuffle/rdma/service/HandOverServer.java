/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.shuffle.rdma.fdpass.PeerCredentials;
import org.apache.spark.shuffle.rdma.fdpass.RefusedMessageException;
import org.apache.spark.shuffle.rdma.fdpass.UnixServerSocket;
import org.apache.spark.shuffle.rdma.fdpass.UnixSocket;
import org.apache.spark.shuffle.rdma.handover.HandOverAnswer;
import org.apache.spark.shuffle.rdma.handover.HandOverProtocol;
import org.apache.spark.shuffle.rdma.handover.HandOverProtocol.Kind;
import org.apache.spark.shuffle.rdma.handover.HandOverRequest;
import org.apache.spark.shuffle.rdma.handover.ProtocolException;

/**
 * The service's Unix socket: accepts executors of this node (a thread each: a node runs a
 * few executors, each with one connection), checks who connected (peer credentials), and
 * answers each request. A bad message is answered with a refusal naming the problem and the
 * connection goes on; only a broken connection ends it. A refusal to a message that did not
 * decode carries the kind HAND_OVER.
 */
final class HandOverServer implements Closeable {
  private final UnixServerSocket server;
  private final ServedOutputs outputs;
  private final Set<Integer> allowedUids;
  private final int maxConnections;
  private final ServiceLog log;
  private final Set<UnixSocket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger ids = new AtomicInteger();
  private final Thread acceptor;
  private volatile boolean closed;

  /** @param allowedUids the uids that may connect; the service's own and root always may */
  HandOverServer(UnixServerSocket server, ServedOutputs outputs, Set<Integer> allowedUids,
      int maxConnections, ServiceLog log) {
    this.server = server;
    this.outputs = outputs;
    this.allowedUids = allowedUids;
    this.maxConnections = maxConnections;
    this.log = log;
    this.acceptor = new Thread(this::acceptLoop, "node-service-accept");
    acceptor.setDaemon(true);
  }

  void start() {
    acceptor.start();
  }

  private void acceptLoop() {
    while (!closed) {
      UnixSocket s;
      try {
        s = server.accept(-1);
      } catch (IOException e) {
        if (!closed) {
          log.info("accept on " + server.path() + " failed, service stops taking "
              + "connections: " + e.getMessage());
        }
        return;
      }
      if (s == null) {
        continue;
      }
      String refusal = admit(s);
      if (refusal != null) {
        outputs.refuse(Kind.HAND_OVER, refusal, new int[0]);
        try {
          s.send(HandOverAnswer.refused(Kind.HAND_OVER, refusal).encode());
        } catch (IOException e) {
          // it is gone already
        }
        s.close();
        continue;
      }
      open.add(s);
      Thread t = new Thread(() -> serve(s), "node-service-conn-" + ids.incrementAndGet());
      t.setDaemon(true);
      t.start();
    }
  }

  /** Null when the peer may hand over; else why not. */
  private String admit(UnixSocket s) {
    if (open.size() >= maxConnections) {
      return "the node service has " + maxConnections + " connections open, its limit";
    }
    try {
      PeerCredentials peer = s.peer();
      if (!allowedUids.contains(peer.uid())) {
        return "uid " + peer.uid() + " (" + peer + ") may not hand over to this node service;"
            + " allowed uids: " + allowedUids + " (add it with --allow-uid)";
      }
      return null;
    } catch (IOException e) {
      return "peer credentials unreadable: " + e.getMessage();
    }
  }

  /**
   * Whether the peer is this process's parent now (read per connection: a parent that died
   * leaves the service to another, so a pid reused later never passes).
   */
  private static boolean fromParent(UnixSocket s) {
    try {
      long pid = s.peer().pid();
      return ProcessHandle.current().parent().map(p -> p.pid() == pid && pid > 1)
          .orElse(false);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private void serve(UnixSocket s) {
    // What this connection declared: its driver (a hand-over renews a lapsed lease) and the
    // applications it proved with their secret.
    HandOverConnection conn = new HandOverConnection(fromParent(s));
    try {
      while (!closed) {
        UnixSocket.Message m;
        try {
          m = s.receive(HandOverProtocol.MAX_REQUEST, HandOverProtocol.MAX_FDS, -1);
        } catch (RefusedMessageException e) {
          s.send(outputs.refuse(Kind.HAND_OVER, e.getMessage(), new int[0]).encode());
          continue;
        }
        HandOverAnswer answer;
        try {
          HandOverRequest req = HandOverRequest.decode(m.body(), m.fds().length);
          answer = outputs.answer(req, m.fds(), conn);
        } catch (ProtocolException e) {
          answer = outputs.refuse(Kind.HAND_OVER, "malformed request: " + e.getMessage(),
              m.fds());
        }
        s.send(answer.encode());
      }
    } catch (EOFException e) {
      // the executor closed its connection
    } catch (IOException e) {
      if (!closed) {
        log.info("connection ended: " + e.getMessage());
      }
    } finally {
      open.remove(s);
      s.close();
    }
  }

  @Override
  public void close() {
    closed = true;
    server.close();
    for (UnixSocket s : open) {
      s.shutdown(); // wakes its thread, which closes it
    }
  }
}
