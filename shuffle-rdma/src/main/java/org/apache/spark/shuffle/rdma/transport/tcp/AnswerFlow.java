/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.apache.spark.shuffle.rdma.transport.RareLog;

/**
 * Bounds what one connection's unread answers hold. Every answer the server hands to Netty
 * is counted until its write ends; above {@link #PAUSE_BYTES} queued the server stops
 * reading from that connection (Netty's autoRead), below {@link #RESUME_BYTES} it reads
 * again. Netty's own writability cannot do this: it counts file regions (sendfile answers,
 * network-common's framed messages) as 0 bytes. A connection paused with no answer byte
 * written for {@code stallMs} (spark.shuffle.rdma.readTimeout, after which its reader has
 * given up on those reads anyway) is closed: its queued answers are dropped and the region
 * references they hold released, so deregistration cannot be held up by a peer that stopped
 * reading.
 *
 * <p>So a connection holds at most PAUSE_BYTES plus the answers to one socket read of
 * requests (Netty reads at most 64 KiB at a time: about 60 batches, each bounded by
 * ReadBatch's per-batch cap) in region references, and their answer headers in memory.
 * All methods run on the connection's event loop.
 */
final class AnswerFlow {
  private static final Logger LOG = LoggerFactory.getLogger(AnswerFlow.class);
  static final long PAUSE_BYTES = 64L << 20;
  static final long RESUME_BYTES = 16L << 20;

  private final long stallMs;
  final AtomicLong pauses = new AtomicLong();
  final AtomicLong stallsClosed = new AtomicLong();

  AnswerFlow(long stallMs) {
    this.stallMs = stallMs;
  }

  /** {@code bytes} of answer were handed to Netty on {@code channel}. */
  void queued(Channel channel, PeerState s, long bytes) {
    s.answerBytesQueued += bytes;
    if (!s.paused && s.answerBytesQueued > PAUSE_BYTES) {
      s.paused = true;
      channel.config().setAutoRead(false);
      pauses.incrementAndGet();
      watch(channel, s, s.answerBytesWritten);
    }
  }

  /** The write of {@code bytes} of answer ended (written or dropped). */
  void done(Channel channel, PeerState s, long bytes, boolean written) {
    s.answerBytesQueued -= bytes;
    if (written) {
      s.answerBytesWritten += bytes;
    }
    if (s.paused && s.answerBytesQueued <= RESUME_BYTES) {
      s.paused = false;
      channel.config().setAutoRead(true);
    }
  }

  private void watch(Channel channel, PeerState s, long writtenMark) {
    channel.eventLoop().schedule(() -> {
      if (!s.paused || !channel.isOpen()) {
        return;
      }
      if (s.answerBytesWritten != writtenMark) {
        watch(channel, s, s.answerBytesWritten); // slow but reading: keep waiting
        return;
      }
      long n = stallsClosed.incrementAndGet();
      if (RareLog.due(n)) {
        LOG.warn("tcp transport: closed the connection from {}: it read none of its {} "
            + "queued answer bytes for {} ms; {} closed so far", channel.remoteAddress(),
            s.answerBytesQueued, stallMs, n);
      }
      channel.close();
    }, stallMs, TimeUnit.MILLISECONDS);
  }
}
