/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.util.List;

import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportChannel;
import org.apache.spark.shuffle.rdma.transport.verbs.QueuePairStriping;

/**
 * A peer's reads spread over several queue pairs (spark.shuffle.rdma.verbs.queuePairsPerPeer
 * above 1): each lane is a {@link VerbsChannel} with its own QP, CQ, slots and READ depth.
 * A batch is cut into at most one consecutive run per lane, and each run goes to the lane
 * with the fewest reads waiting or posted. Error isolation and reconnecting stay per lane:
 * a read's error breaks only its lane's QP, and that lane alone is replaced (its flushed
 * and later reads follow it there). Only choosing a lane is done here.
 */
final class StripedChannel implements TransportChannel, QueuePairStriping.Lanes {
  private final PeerAddress peer;
  private final VerbsChannel[] lanes;
  /** Where the least-loaded search starts, rotated per run (racy on purpose: a hint). */
  private int next;

  StripedChannel(PeerAddress peer, VerbsChannel[] lanes) {
    this.peer = peer;
    this.lanes = lanes;
  }

  @Override
  public PeerAddress peer() {
    return peer;
  }

  @Override
  public void read(List<ReadRequest> batch) {
    int size = batch.size();
    int run = QueuePairStriping.runLength(size, lanes.length);
    if (run >= size) {
      lanes[pick()].read(batch);
      return;
    }
    for (int from = 0; from < size; from += run) {
      lanes[pick()].read(batch.subList(from, Math.min(size, from + run)));
    }
  }

  private int pick() {
    return QueuePairStriping.leastLoaded(this, next++);
  }

  @Override
  public int maxReadLength() {
    return lanes[0].maxReadLength();
  }

  /** False once any lane broke; connecting again then replaces that lane only. */
  @Override
  public boolean isActive() {
    for (VerbsChannel ch : lanes) {
      if (!ch.isActive()) {
        return false;
      }
    }
    return true;
  }

  boolean uses(VerbsChannel[] others) {
    return java.util.Arrays.equals(lanes, others);
  }

  @Override
  public int lanes() {
    return lanes.length;
  }

  @Override
  public int load(int lane) {
    return lanes[lane].load();
  }

  @Override
  public String toString() {
    return "verbs channel to " + peer + " over " + lanes.length + " queue pairs";
  }
}
