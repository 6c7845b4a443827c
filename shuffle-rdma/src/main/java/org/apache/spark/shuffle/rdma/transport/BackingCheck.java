/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport;

/**
 * Tells a serving transport whether the file behind a registered mapping still holds every
 * registered byte. A mapped page past a file's end cannot be read (SIGBUS, EFAULT), and a file
 * truncated under its registration must not be served as if it were whole.
 *
 * <p>The tcp transport asks before it serves (one stat): once per single read, and once per
 * run of reads of one region in a batch; verbs never asks, because the pages a registration
 * pinned stay readable and hold the bytes that were registered.
 */
@FunctionalInterface
public interface BackingCheck {
  BackingCheck NONE = () -> null;

  /** Null when the backing file is intact, else what is wrong, for the refusal message. */
  String problem();
}
