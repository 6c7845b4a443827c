/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import org.apache.spark.FetchFailed
import org.apache.spark.shuffle.{FetchFailedException, MetadataFetchFailedException}
import org.apache.spark.storage.BlockManagerId
import org.scalatest.funsuite.AnyFunSuite

/**
 * The fault suites leave Spark's own missing-location failures out of their per-block
 * assertions: the classification must take exactly those, from the reasons Spark really builds.
 */
class ClusterSupportSuite extends AnyFunSuite {
  import ClusterSupport._

  private def reason(e: FetchFailedException): FetchFailed =
    e.toTaskFailedReason.asInstanceOf[FetchFailed]

  test("Spark's missing output location is not a block read; a failed block read is") {
    val missing = reason(new MetadataFetchFailedException(0, 3,
      "Missing an output location for shuffle 0 partition 3"))
    assert(isMissingOutputLocation(missing), missing)
    val read = reason(new FetchFailedException(BlockManagerId("1", "127.0.0.1", 7000), 0, 5L,
      1, 3, "block checksum mismatch", null))
    assert(!isMissingOutputLocation(read), read)
    // No block manager named but a real map: a read that lost its peer's identity still counts.
    val anonymous = reason(new FetchFailedException(null, 0, 5L, 1, 3,
      "Missing an output location", null))
    assert(!isMissingOutputLocation(anonymous), anonymous)
    assert(blockReadFailures(Seq(missing, read, anonymous)) == List(read, anonymous))
  }
}
