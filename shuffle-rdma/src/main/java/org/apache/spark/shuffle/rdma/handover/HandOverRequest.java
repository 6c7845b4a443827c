/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import org.apache.spark.shuffle.rdma.checksum.ChecksumAlgorithm;
import org.apache.spark.shuffle.rdma.handover.HandOverProtocol.Kind;

/**
 * A request to the node service. HAND_OVER: application, shuffle, map, partition count, the
 * checksum algorithm, and how many descriptors the message carries (data, index, and the
 * checksum file when the algorithm is not NONE). RELEASE_SHUFFLE: application and shuffle.
 * RELEASE_APP: application. STATS: nothing. APP_DRIVER: application and its driver's host
 * and port.
 */
public final class HandOverRequest {
  private final Kind kind;
  private final String appId;
  private final int shuffleId;
  private final long mapId;
  private final int partitions;
  private final ChecksumAlgorithm checksumAlgorithm;
  private final String driverHost;
  private final int driverPort;
  /** APP_AUTH: the application's secret (never printed) and its wire encryption. */
  private final String secret;
  private final int encryption;

  private HandOverRequest(Kind kind, String appId, int shuffleId, long mapId, int partitions,
      ChecksumAlgorithm checksumAlgorithm) {
    this(kind, appId, shuffleId, mapId, partitions, checksumAlgorithm, null, 0, null, 0);
  }

  private HandOverRequest(Kind kind, String appId, int shuffleId, long mapId, int partitions,
      ChecksumAlgorithm checksumAlgorithm, String driverHost, int driverPort, String secret,
      int encryption) {
    this.kind = kind;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.partitions = partitions;
    this.checksumAlgorithm = checksumAlgorithm;
    this.driverHost = driverHost;
    this.driverPort = driverPort;
    this.secret = secret;
    this.encryption = encryption;
  }

  public static HandOverRequest handOver(String appId, int shuffleId, long mapId,
      int partitions, ChecksumAlgorithm checksumAlgorithm) {
    return new HandOverRequest(Kind.HAND_OVER, appId, shuffleId, mapId, partitions,
        checksumAlgorithm);
  }

  public static HandOverRequest releaseShuffle(String appId, int shuffleId) {
    return new HandOverRequest(Kind.RELEASE_SHUFFLE, appId, shuffleId, 0, 0,
        ChecksumAlgorithm.NONE);
  }

  public static HandOverRequest releaseOutput(String appId, int shuffleId, long mapId) {
    return new HandOverRequest(Kind.RELEASE_OUTPUT, appId, shuffleId, mapId, 0,
        ChecksumAlgorithm.NONE);
  }

  public static HandOverRequest releaseApp(String appId) {
    return new HandOverRequest(Kind.RELEASE_APP, appId, 0, 0, 0, ChecksumAlgorithm.NONE);
  }

  public static HandOverRequest appDriver(String appId, String driverHost, int driverPort) {
    return new HandOverRequest(Kind.APP_DRIVER, appId, 0, 0, 0, ChecksumAlgorithm.NONE,
        driverHost, driverPort, null, 0);
  }

  /** Wire encryption of APP_AUTH: spark.network.crypto.enabled. */
  public static final int NETWORK_CRYPTO = 1;
  /** Wire encryption of APP_AUTH: spark.authenticate.enableSaslEncryption. */
  public static final int SASL_ENCRYPTION = 2;

  /** @param encryption {@link #NETWORK_CRYPTO} and/or {@link #SASL_ENCRYPTION}, or 0 */
  public static HandOverRequest appAuth(String appId, String secret, int encryption) {
    return new HandOverRequest(Kind.APP_AUTH, appId, 0, 0, 0, ChecksumAlgorithm.NONE, null, 0,
        secret, encryption);
  }

  public static HandOverRequest stats() {
    return new HandOverRequest(Kind.STATS, null, 0, 0, 0, ChecksumAlgorithm.NONE);
  }

  public Kind kind() {
    return kind;
  }

  public String appId() {
    return appId;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public long mapId() {
    return mapId;
  }

  public int partitions() {
    return partitions;
  }

  public ChecksumAlgorithm checksumAlgorithm() {
    return checksumAlgorithm;
  }

  /** APP_DRIVER: the host executors reach the driver at (spark.driver.host). */
  public String driverHost() {
    return driverHost;
  }

  /** APP_DRIVER: the driver's RPC port (spark.driver.port). */
  public int driverPort() {
    return driverPort;
  }

  /** APP_AUTH: the application's secret (spark.authenticate.secret or Spark's generated). */
  public String secret() {
    return secret;
  }

  /** APP_AUTH: the application's wire encryption settings, as bits. */
  public int encryption() {
    return encryption;
  }

  /** Descriptors a HAND_OVER carries: data and index, plus the checksum file if any. */
  public int expectedFds() {
    return kind != Kind.HAND_OVER ? 0 : checksumAlgorithm == ChecksumAlgorithm.NONE ? 2 : 3;
  }

  public byte[] encode() {
    WireWriter w = HandOverProtocol.header(kind);
    switch (kind) {
      case HAND_OVER:
        w.string(appId).i32(shuffleId).i64(mapId).i32(partitions)
            .u8(checksumAlgorithm.code()).u8(expectedFds());
        break;
      case RELEASE_SHUFFLE:
        w.string(appId).i32(shuffleId);
        break;
      case RELEASE_APP:
        w.string(appId);
        break;
      case RELEASE_OUTPUT:
        w.string(appId).i32(shuffleId).i64(mapId);
        break;
      case APP_DRIVER:
        w.string(appId).string(driverHost).i32(driverPort);
        break;
      case APP_AUTH:
        w.string(appId).string(secret).u8(encryption);
        break;
      default:
        break;
    }
    return w.toBytes();
  }

  /**
   * Decodes and checks a request that came with {@code fdCount} descriptors.
   *
   * @throws ProtocolException naming the field: truncated, trailing bytes, bad magic or
   *     version, a bad application id, negative ids, or a descriptor count that differs from
   *     what the request declares
   */
  public static HandOverRequest decode(byte[] message, int fdCount) throws ProtocolException {
    WireReader r = new WireReader(message);
    Kind kind = HandOverProtocol.header(r);
    HandOverRequest req;
    switch (kind) {
      case HAND_OVER: {
        String app = HandOverProtocol.appId(r);
        int shuffle = r.i32("shuffle id");
        long map = r.i64("map id");
        int partitions = r.i32("partition count");
        byte code = r.u8("checksum algorithm");
        int declared = r.u8("descriptor count");
        ChecksumAlgorithm algorithm;
        try {
          algorithm = ChecksumAlgorithm.ofCode(code);
        } catch (IllegalArgumentException e) {
          throw new ProtocolException(e.getMessage());
        }
        if (shuffle < 0 || map < 0 || partitions < 0) {
          throw new ProtocolException("shuffle " + shuffle + ", map " + map + ", partitions "
              + partitions + ": none may be negative");
        }
        req = handOver(app, shuffle, map, partitions, algorithm);
        if (declared != req.expectedFds()) {
          throw new ProtocolException("the request declares " + declared + " descriptors; "
              + "a hand-over with checksums " + algorithm + " carries " + req.expectedFds());
        }
        break;
      }
      case RELEASE_SHUFFLE: {
        String app = HandOverProtocol.appId(r);
        int shuffle = r.i32("shuffle id");
        req = releaseShuffle(app, shuffle);
        break;
      }
      case RELEASE_APP:
        req = releaseApp(HandOverProtocol.appId(r));
        break;
      case RELEASE_OUTPUT: {
        String app = HandOverProtocol.appId(r);
        int shuffle = r.i32("shuffle id");
        long map = r.i64("map id");
        if (shuffle < 0 || map < 0) {
          throw new ProtocolException("shuffle " + shuffle + ", map " + map + ": neither may "
              + "be negative");
        }
        req = releaseOutput(app, shuffle, map);
        break;
      }
      case APP_DRIVER: {
        String app = HandOverProtocol.appId(r);
        String host = r.string("driver host", HandOverProtocol.MAX_HOST);
        int port = r.i32("driver port");
        if (host.isEmpty() || port < 1 || port > 65535) {
          throw new ProtocolException("driver '" + host + "' port " + port + ": needs a host "
              + "and a port in [1, 65535]");
        }
        req = appDriver(app, host, port);
        break;
      }
      case APP_AUTH: {
        String app = HandOverProtocol.appId(r);
        String secret = r.string("secret", HandOverProtocol.MAX_SECRET);
        int encryption = r.u8("encryption");
        if (secret.isEmpty() || encryption > (NETWORK_CRYPTO | SASL_ENCRYPTION)) {
          throw new ProtocolException("an application secret must not be empty and "
              + "encryption has bits 1 and 2 only (" + encryption + ")");
        }
        req = appAuth(app, secret, encryption);
        break;
      }
      default:
        req = stats();
    }
    r.end(kind + " request");
    if (fdCount != req.expectedFds()) {
      throw new ProtocolException(kind + " request came with " + fdCount + " descriptors, "
          + "expected " + req.expectedFds() + " (data, index"
          + (req.expectedFds() == 3 ? ", checksums)" : ")"));
    }
    return req;
  }

  @Override
  public String toString() {
    switch (kind) {
      case HAND_OVER:
        return "hand-over of " + appId + " shuffle " + shuffleId + " map " + mapId + " ("
            + partitions + " partitions, checksums " + checksumAlgorithm + ")";
      case RELEASE_SHUFFLE:
        return "release of " + appId + " shuffle " + shuffleId;
      case RELEASE_APP:
        return "release of " + appId;
      case RELEASE_OUTPUT:
        return "release of " + appId + " shuffle " + shuffleId + " map " + mapId;
      case APP_DRIVER:
        return "driver of " + appId + " at " + driverHost + ":" + driverPort;
      case APP_AUTH:
        return "authentication of " + appId + " (encryption " + encryption + ")";
      default:
        return "stats";
    }
  }
}
