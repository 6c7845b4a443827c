/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.function.LongSupplier;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual authentication of verbs connections with {@code spark.authenticate=true}, carried in
 * the RDMA-CM private data (docs/security.md). Both sides hold the application secret (the
 * one Spark's SecurityManager gives the tcp transport and Spark's own RPC).
 *
 * <p>Connect request (52 bytes; RoCE/IB carry at most 56 in a REQ):
 * <pre>
 *   0  "SRA" + version 1      4 bytes
 *   4  client nonce           16 bytes (SecureRandom)
 *   20 time, ms since epoch   8 bytes big-endian
 *   28 tag                    24 bytes: HMAC-SHA256(secret, "shuffle-rdma verbs connect" 0
 *                             appId 0 bytes[0..28) serverIp serverPort clientQpn), truncated
 * </pre>
 * The server checks version, time (within {@link #MAX_SKEW_MS} of its clock), tag
 * (constant-time) and that the nonce was not seen in the window, all before it creates a
 * queue pair, and refuses with rdma_reject otherwise.
 *
 * <p>Accept reply (52 bytes):
 * <pre>
 *   0  "SRA" + version 1      4 bytes
 *   4  server nonce           16 bytes
 *   20 proof                  32 bytes: HMAC-SHA256(secret, "shuffle-rdma verbs accept" 0
 *                             appId 0 clientNonce bytes[0..20) serverIp serverPort clientQpn
 *                             serverQpn)
 * </pre>
 * The client checks the proof before it posts anything on the connection. Binding the
 * server's address and both queue pair numbers keeps a captured request from being used
 * against another server or for another queue pair.
 */
public final class ConnectAuth {
  public static final int VERSION = 1;
  public static final int NONCE_LENGTH = 16;
  public static final int TAG_LENGTH = 24;
  public static final int REQUEST_LENGTH = 4 + NONCE_LENGTH + 8 + TAG_LENGTH;
  public static final int REPLY_LENGTH = 4 + NONCE_LENGTH + 32;
  /** How far a request's time may be from the server's clock, either way. */
  public static final long MAX_SKEW_MS = 120_000;
  /** Live nonces remembered; beyond that requests are refused until old ones expire. */
  public static final int NONCE_CACHE_ENTRIES = 65_536;

  private static final byte[] MAGIC = {'S', 'R', 'A', VERSION};
  private static final byte[] CONNECT = "shuffle-rdma verbs connect".getBytes(
      StandardCharsets.US_ASCII);
  private static final byte[] ACCEPT = "shuffle-rdma verbs accept".getBytes(
      StandardCharsets.US_ASCII);

  private final SecretKeySpec key;
  private final byte[] appId;
  private final LongSupplier clockMs;
  private final NonceCache nonces;
  private final SecureRandom random = new SecureRandom();

  public ConnectAuth(String secret, String appId, LongSupplier clockMs) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("spark.authenticate=true but Spark's SecurityManager "
          + "has no secret (spark.authenticate.secret or its file)");
    }
    this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.appId = String.valueOf(appId).getBytes(StandardCharsets.UTF_8);
    this.clockMs = clockMs;
    this.nonces = new NonceCache(2 * MAX_SKEW_MS, NONCE_CACHE_ENTRIES);
  }

  /** The server endpoint as both sides bind it into the MACs: IP bytes then port. */
  public static byte[] endpoint(InetSocketAddress server) {
    byte[] ip = server.getAddress().getAddress();
    byte[] out = Arrays.copyOf(ip, ip.length + 2);
    out[ip.length] = (byte) (server.getPort() >>> 8);
    out[ip.length + 1] = (byte) server.getPort();
    return out;
  }

  // ---- client ----

  /** A fresh connect request for the server at {@code server}, from QP {@code clientQpn}. */
  public byte[] request(byte[] server, int clientQpn) {
    ByteBuffer b = ByteBuffer.allocate(REQUEST_LENGTH);
    b.put(MAGIC);
    byte[] nonce = new byte[NONCE_LENGTH];
    random.nextBytes(nonce);
    b.put(nonce);
    b.putLong(clockMs.getAsLong());
    byte[] out = b.array();
    byte[] tag = connectTag(out, server, clientQpn);
    System.arraycopy(tag, 0, out, REQUEST_LENGTH - TAG_LENGTH, TAG_LENGTH);
    return out;
  }

  /**
   * Whether {@code reply} (its first {@code length} bytes) proves the server knows the
   * secret and answers this {@code request}.
   */
  public boolean checkReply(byte[] request, byte[] reply, int length, byte[] server,
      int clientQpn, int serverQpn) {
    if (length < REPLY_LENGTH || !hasMagic(reply)) {
      return false;
    }
    byte[] expected = acceptProof(request, reply, server, clientQpn, serverQpn);
    return MessageDigest.isEqual(expected, Arrays.copyOfRange(reply, 4 + NONCE_LENGTH,
        REPLY_LENGTH));
  }

  // ---- server ----

  /**
   * Null when {@code request} (its first {@code length} bytes) is a fresh request of this
   * application for this server from QP {@code clientQpn}; otherwise why it is refused.
   * An accepted request's nonce is remembered, so the same request is refused next time.
   */
  public String checkRequest(byte[] request, int length, byte[] server, int clientQpn) {
    if (request == null || length < REQUEST_LENGTH) {
      return "no or truncated authentication data (" + Math.max(length, 0) + " of "
          + REQUEST_LENGTH + " bytes): the peer does not use spark.authenticate";
    }
    if (!hasMagic(request)) {
      return "not an authentication request of this version";
    }
    long sent = ByteBuffer.wrap(request, 4 + NONCE_LENGTH, 8).getLong();
    long now = clockMs.getAsLong();
    byte[] tag = connectTag(request, server, clientQpn);
    // Checked before the time, so an unauthenticated peer learns nothing about the clock.
    if (!MessageDigest.isEqual(tag, Arrays.copyOfRange(request, REQUEST_LENGTH - TAG_LENGTH,
        REQUEST_LENGTH))) {
      return "wrong MAC (another secret or application, or for another server or queue pair)";
    }
    if (Math.abs(now - sent) > MAX_SKEW_MS) {
      return "stale request: its time is " + (now - sent) + " ms from this clock (at most "
          + MAX_SKEW_MS + "; are the hosts' clocks synchronized?)";
    }
    switch (nonces.record(Arrays.copyOfRange(request, 4, 4 + NONCE_LENGTH), sent, now)) {
      case REPLAYED:
        return "replayed request (nonce already seen)";
      case FULL:
        return "too many recent connection requests (" + NONCE_CACHE_ENTRIES
            + " within the window)";
      default:
        return null;
    }
  }

  /** The accept reply to an accepted {@code request}, proving this side knows the secret. */
  public byte[] reply(byte[] request, byte[] server, int clientQpn, int serverQpn) {
    byte[] out = new byte[REPLY_LENGTH];
    System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
    byte[] nonce = new byte[NONCE_LENGTH];
    random.nextBytes(nonce);
    System.arraycopy(nonce, 0, out, 4, NONCE_LENGTH);
    byte[] proof = acceptProof(request, out, server, clientQpn, serverQpn);
    System.arraycopy(proof, 0, out, 4 + NONCE_LENGTH, proof.length);
    return out;
  }

  // ---- MACs ----

  private static boolean hasMagic(byte[] b) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (b[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private byte[] connectTag(byte[] request, byte[] server, int clientQpn) {
    Mac mac = mac(CONNECT);
    mac.update(request, 0, REQUEST_LENGTH - TAG_LENGTH);
    mac.update(server);
    mac.update(intBytes(clientQpn));
    return Arrays.copyOf(mac.doFinal(), TAG_LENGTH);
  }

  private byte[] acceptProof(byte[] request, byte[] reply, byte[] server, int clientQpn,
      int serverQpn) {
    Mac mac = mac(ACCEPT);
    mac.update(request, 4, NONCE_LENGTH);
    mac.update(reply, 0, 4 + NONCE_LENGTH);
    mac.update(server);
    mac.update(intBytes(clientQpn));
    mac.update(intBytes(serverQpn));
    return mac.doFinal();
  }

  /** A MAC keyed by the secret, already fed the purpose and the application id. */
  private Mac mac(byte[] purpose) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(purpose);
      mac.update((byte) 0);
      mac.update(appId);
      mac.update((byte) 0);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable in this JVM", e);
    }
  }

  private static byte[] intBytes(int v) {
    return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
  }
}
