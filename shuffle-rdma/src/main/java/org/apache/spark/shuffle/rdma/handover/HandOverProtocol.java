/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.util.regex.Pattern;

/**
 * Constants of the hand-over protocol between executors and the node service, over the
 * service's Unix socket (one SOCK_SEQPACKET message per request and per answer; see
 * docs/node-service.md). Every message starts with {@link #MAGIC}, {@link #VERSION} and its
 * kind; fields are big-endian; strings are a u16 length and UTF-8. A message of another
 * version is refused, not guessed at.
 */
public final class HandOverProtocol {
  /** "SRHO": shuffle-rdma hand-over. */
  public static final int MAGIC = 0x5352484f;
  public static final short VERSION = 1;
  /** The longest request (an application id of 255 bytes fits with room to spare). */
  public static final int MAX_REQUEST = 1024;
  /** The longest answer (a descriptor of a map output of about 4,000 GiB fits). */
  public static final int MAX_ANSWER = 65536;
  /** Descriptors a hand-over carries: data, index, and optionally checksums. */
  public static final int MAX_FDS = 3;
  public static final int MAX_APP_ID = 255;
  public static final int MAX_REASON = 1024;
  /** The longest application secret the service takes (Spark's generated one: 44 bytes). */
  public static final int MAX_SECRET = 512;
  /** A driver's host name or address (DNS names are at most 253 bytes). */
  public static final int MAX_HOST = 255;
  /** Spark's application ids (local-..., app-..., application_..., spark-...). */
  public static final Pattern APP_ID = Pattern.compile("[A-Za-z0-9._-]{1,255}");

  static final byte OK = 0;
  static final byte REFUSED = 1;

  private HandOverProtocol() {}

  /** What a message asks for. */
  public enum Kind {
    HAND_OVER(1),
    RELEASE_SHUFFLE(2),
    RELEASE_APP(3),
    STATS(4),
    /**
     * The application's driver (host, port): the service releases the application once the
     * driver stops accepting connections for spark.shuffle.rdma.service.driverTimeout.
     * Added in version 1 after the first four; a service without it refuses it as an
     * unknown kind and the executor goes on without a lease.
     */
    APP_DRIVER(5),
    /**
     * With spark.authenticate: the application's secret (and whether its connections are
     * encrypted). The service then serves the application's outputs on a transport of its
     * own that authenticates readers with that secret, and takes hand-overs and releases of
     * the application only on connections that presented it.
     */
    APP_AUTH(6),
    /**
     * One output: the driver saw its task attempt end without success after the commit (a
     * speculative loser, a failure after the commit), so Spark never tracks it.
     */
    RELEASE_OUTPUT(7);

    final byte code;

    Kind(int code) {
      this.code = (byte) code;
    }

    static Kind of(byte code) throws ProtocolException {
      for (Kind k : values()) {
        if (k.code == code) {
          return k;
        }
      }
      throw new ProtocolException("unknown request kind " + code);
    }
  }

  /** Reads and checks magic and version; returns the kind. */
  static Kind header(WireReader r) throws ProtocolException {
    int magic = r.i32("magic");
    if (magic != MAGIC) {
      throw new ProtocolException("not a shuffle-rdma hand-over message (magic 0x"
          + Integer.toHexString(magic) + ", expected 0x" + Integer.toHexString(MAGIC) + ")");
    }
    short version = r.u16("version");
    if (version != VERSION) {
      throw new ProtocolException("hand-over protocol version " + version + ", this side "
          + "speaks " + VERSION + ": run the plugin jar of one version on executors and the "
          + "node service");
    }
    return Kind.of(r.u8("kind"));
  }

  static WireWriter header(Kind kind) {
    return new WireWriter().i32(MAGIC).u16(VERSION).u8(kind.code);
  }

  static String appId(WireReader r) throws ProtocolException {
    String id = r.string("application id", MAX_APP_ID);
    checkAppId(id);
    return id;
  }

  static void checkAppId(String id) throws ProtocolException {
    if (!APP_ID.matcher(id).matches()) {
      throw new ProtocolException("application id '" + id + "' is not 1 to 255 of "
          + "[A-Za-z0-9._-]");
    }
  }
}
