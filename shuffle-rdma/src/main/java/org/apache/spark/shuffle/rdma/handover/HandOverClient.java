/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.fdpass.UnixSocket;

/**
 * An executor's connection to the node service: hands committed map outputs over (their
 * files opened here and passed as descriptors, so the service needs no access to the
 * executor's directories), releases them, reads the service's gauges. One request at a
 * time per client (synchronized); an answer that does not come within the timeout fails the
 * request and the connection.
 */
public final class HandOverClient implements Closeable {
  private final UnixSocket socket;
  private final int timeoutMs;

  private HandOverClient(UnixSocket socket, int timeoutMs) {
    this.socket = socket;
    this.timeoutMs = timeoutMs;
  }

  /** Connects to the service's socket; {@code timeoutMs} bounds the wait for each answer. */
  public static HandOverClient connect(Path socketPath, int timeoutMs) throws IOException {
    return new HandOverClient(UnixSocket.connect(socketPath), timeoutMs);
  }

  /**
   * Hands one committed map output over. The answer is a refusal (the service's one-line
   * reason) or the descriptor to publish and the address readers reach it at. This side's
   * descriptors are closed before return either way; the service keeps its own.
   *
   * @param checksumFile Spark's checksum file, or null when {@code algorithm} is NONE
   */
  public synchronized HandOverAnswer handOver(String appId, int shuffleId, long mapId,
      int partitions, Path dataFile, Path indexFile, Path checksumFile,
      ChecksumAlgorithm algorithm) throws IOException {
    HandOverRequest req = HandOverRequest.handOver(appId, shuffleId, mapId, partitions,
        checksumFile == null ? ChecksumAlgorithm.NONE : algorithm);
    int[] fds = new int[req.expectedFds()];
    java.util.Arrays.fill(fds, -1);
    try {
      fds[0] = Fds.openRead(dataFile);
      fds[1] = Fds.openRead(indexFile);
      if (fds.length == 3) {
        fds[2] = Fds.openRead(checksumFile);
      }
      return call(req, fds);
    } finally {
      Fds.closeAll(fds);
    }
  }

  public synchronized HandOverAnswer releaseShuffle(String appId, int shuffleId)
      throws IOException {
    return call(HandOverRequest.releaseShuffle(appId, shuffleId));
  }

  public synchronized HandOverAnswer releaseOutput(String appId, int shuffleId, long mapId)
      throws IOException {
    return call(HandOverRequest.releaseOutput(appId, shuffleId, mapId));
  }

  public synchronized HandOverAnswer releaseApp(String appId) throws IOException {
    return call(HandOverRequest.releaseApp(appId));
  }

  /** Names the application's driver, whose liveness bounds the application's outputs. */
  public synchronized HandOverAnswer appDriver(String appId, String driverHost, int driverPort)
      throws IOException {
    return call(HandOverRequest.appDriver(appId, driverHost, driverPort));
  }

  /** Proves the application (spark.authenticate) on this connection. */
  public synchronized HandOverAnswer appAuth(String appId, String secret, int encryption)
      throws IOException {
    return call(HandOverRequest.appAuth(appId, secret, encryption));
  }

  public synchronized ServiceStats stats() throws IOException {
    HandOverAnswer a = call(HandOverRequest.stats());
    if (a.isRefused()) {
      throw new IOException("the node service refused stats: " + a.refusal());
    }
    return a.stats();
  }

  /** Sends a request as raw bytes with raw descriptors (tests of the service's checks). */
  public synchronized HandOverAnswer call(byte[] request, int... fds) throws IOException {
    socket.send(request, fds);
    UnixSocket.Message m = socket.receive(HandOverProtocol.MAX_ANSWER, 0, timeoutMs);
    if (m == null) {
      socket.close();
      throw new IOException("the node service did not answer within " + timeoutMs + " ms");
    }
    return HandOverAnswer.decode(m.body());
  }

  private HandOverAnswer call(HandOverRequest req, int... fds) throws IOException {
    return call(req.encode(), fds);
  }

  @Override
  public void close() {
    socket.close();
  }
}
