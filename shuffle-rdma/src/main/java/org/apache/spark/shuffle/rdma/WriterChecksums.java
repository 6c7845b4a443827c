/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.File;

import org.apache.spark.SparkConf;
import org.apache.spark.internal.config.package$;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * Which checksum file of a committed map output the registry registers: Spark's own
 * (IndexShuffleBlockResolver writes it at commit, next to the index, when
 * spark.shuffle.checksum.enabled), only when this application verifies checksums, since
 * registering it costs a mapping and a registration per output. The algorithm is read through
 * Spark's own config entry, whose default differs between Spark lines.
 */
final class WriterChecksums {
  private static final Logger LOG = LoggerFactory.getLogger(WriterChecksums.class);

  private final ChecksumAlgorithm algorithm;
  private final String sparkName;

  private WriterChecksums(ChecksumAlgorithm algorithm, String sparkName) {
    this.algorithm = algorithm;
    this.sparkName = sparkName;
  }

  static WriterChecksums of(SparkConf conf, boolean verify) {
    if (!verify) {
      return new WriterChecksums(ChecksumAlgorithm.NONE, null);
    }
    boolean enabled = (Boolean) conf.get(package$.MODULE$.SHUFFLE_CHECKSUM_ENABLED());
    if (!enabled) {
      LOG.warn("spark.shuffle.rdma.verifyChecksums is on but spark.shuffle.checksum.enabled is "
          + "off: map outputs have no checksums, blocks are read unverified");
      return new WriterChecksums(ChecksumAlgorithm.NONE, null);
    }
    String name = conf.get(package$.MODULE$.SHUFFLE_CHECKSUM_ALGORITHM());
    ChecksumAlgorithm a = ChecksumAlgorithm.ofSparkName(name);
    if (a == null) {
      LOG.warn("spark.shuffle.checksum.algorithm {} is not known to the RDMA shuffle: blocks "
          + "are read unverified", name);
      return new WriterChecksums(ChecksumAlgorithm.NONE, null);
    }
    return new WriterChecksums(a, name);
  }

  ChecksumAlgorithm algorithm() {
    return algorithm;
  }

  /** The output's checksum file (it may not exist), or null when none is to be registered. */
  File file(IndexShuffleBlockResolver resolver, int shuffleId, long mapId) {
    return algorithm == ChecksumAlgorithm.NONE ? null
        : resolver.getChecksumFile(shuffleId, mapId, sparkName, Option.empty());
  }
}
