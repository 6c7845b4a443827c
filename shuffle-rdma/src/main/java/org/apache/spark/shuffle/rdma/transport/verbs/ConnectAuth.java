/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.net.InetAddress;
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
import org.apache.spark.shuffle.rdma.transport.PeerGroup;

/**
 * Mutual authentication of verbs connections with {@code spark.authenticate=true}, carried in
 * the RDMA-CM private data (docs/security.md). Both sides hold the application secret (the
 * one Spark's SecurityManager gives the tcp transport and Spark's own RPC).
 *
 * <p>Connect request (52 bytes; RoCE/IB carry at most 56 in a REQ):
 * <pre>
 *   0  "SRA" + version 2      4 bytes
 *   4  client nonce           16 bytes (SecureRandom)
 *   20 time, ms since epoch   8 bytes big-endian
 *   28 tag                    24 bytes: HMAC-SHA256(secret, "shuffle-rdma verbs connect" 0
 *                             appId 0 bytes[0..28) serverIp serverPort clientIp clientQpn),
 *                             truncated
 * </pre>
 * The server checks version, time (within {@link #MAX_SKEW_MS} of its clock), tag
 * (constant-time) and that the nonce was not seen in the window from that client, all
 * before it creates a queue pair, and refuses with rdma_reject otherwise. clientIp is the
 * connecting side's address as RDMA-CM reports it to the server (the peer address of the
 * CONNECT_REQUEST's cm id) and as the client bound it (its cm id's source address).
 *
 * <p>Accept reply (52 bytes):
 * <pre>
 *   0  "SRA" + version 2      4 bytes
 *   4  server nonce           16 bytes
 *   20 proof                  32 bytes: HMAC-SHA256(secret, "shuffle-rdma verbs accept" 0
 *                             appId 0 clientNonce bytes[0..20) serverIp serverPort clientIp
 *                             clientQpn serverQpn)
 * </pre>
 * The client checks the proof before it posts anything on the connection. Binding the
 * server's address, the client's address and both queue pair numbers keeps a captured
 * request from being used against another server, from another host or for another queue
 * pair.
 *
 * <p>Version 1 (earlier builds of this plugin) MACs no client address. Both ends refuse
 * the other version with a message naming it: mixed versions fail closed.
 */
public final class ConnectAuth {
  public static final int VERSION = 2;
  public static final int NONCE_LENGTH = 16;
  public static final int TAG_LENGTH = 24;
  public static final int REQUEST_LENGTH = 4 + NONCE_LENGTH + 8 + TAG_LENGTH;
  public static final int REPLY_LENGTH = 4 + NONCE_LENGTH + 32;
  /** How far a request's time may be from the server's clock, either way. */
  public static final long MAX_SKEW_MS = 120_000;
  /** Live nonces remembered in all; beyond that requests are refused until some expire. */
  public static final int NONCE_CACHE_ENTRIES = 65_536;
  /** Live nonces remembered per client address group by default; see {@link NonceCache}. */
  public static final int NONCE_CACHE_PER_PEER = 2_048;

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
    this(secret, appId, clockMs, NONCE_CACHE_PER_PEER, NONCE_CACHE_ENTRIES);
  }

  /**
   * @param noncesPerPeer live nonces one client address group may hold in the replay cache
   * @param nonceCapacity live nonces all groups together may hold
   */
  public ConnectAuth(String secret, String appId, LongSupplier clockMs, int noncesPerPeer,
      int nonceCapacity) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("spark.authenticate=true but Spark's SecurityManager "
          + "has no secret (spark.authenticate.secret or its file)");
    }
    this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.appId = String.valueOf(appId).getBytes(StandardCharsets.UTF_8);
    this.clockMs = clockMs;
    this.nonces = new NonceCache(2 * MAX_SKEW_MS, noncesPerPeer, nonceCapacity);
  }

  /** The server endpoint as both sides bind it into the MACs: IP bytes then port. */
  public static byte[] endpoint(InetSocketAddress server) {
    byte[] ip = server.getAddress().getAddress();
    byte[] out = Arrays.copyOf(ip, ip.length + 2);
    out[ip.length] = (byte) (server.getPort() >>> 8);
    out[ip.length + 1] = (byte) server.getPort();
    return out;
  }

  /**
   * A client address as both sides bind it into the MACs: its IPv4 or IPv6 bytes (an
   * IPv4-mapped IPv6 address is its IPv4, as InetAddress normalizes it).
   */
  public static byte[] address(InetAddress client) {
    return client.getAddress();
  }

  // ---- client ----

  /**
   * A fresh connect request for the server at {@code server}, from QP {@code clientQpn} on
   * the client address {@code client} ({@link #address}).
   */
  public byte[] request(byte[] server, byte[] client, int clientQpn) {
    ByteBuffer b = ByteBuffer.allocate(REQUEST_LENGTH);
    b.put(MAGIC);
    byte[] nonce = new byte[NONCE_LENGTH];
    random.nextBytes(nonce);
    b.put(nonce);
    b.putLong(clockMs.getAsLong());
    byte[] out = b.array();
    byte[] tag = connectTag(out, server, client, clientQpn);
    System.arraycopy(tag, 0, out, REQUEST_LENGTH - TAG_LENGTH, TAG_LENGTH);
    return out;
  }

  /**
   * Whether {@code reply} (its first {@code length} bytes) proves the server knows the
   * secret and answers this {@code request}.
   */
  public boolean checkReply(byte[] request, byte[] reply, int length, byte[] server,
      byte[] client, int clientQpn, int serverQpn) {
    return replyRefusal(request, reply, length, server, client, clientQpn, serverQpn) == null;
  }

  /** Null when {@link #checkReply} holds; otherwise why the reply is refused. */
  public String replyRefusal(byte[] request, byte[] reply, int length, byte[] server,
      byte[] client, int clientQpn, int serverQpn) {
    if (reply == null || length < REPLY_LENGTH) {
      return "no or truncated proof (" + Math.max(length, 0) + " of " + REPLY_LENGTH
          + " bytes): the server does not use spark.authenticate";
    }
    String version = versionRefusal(reply, "reply");
    if (version != null) {
      return version;
    }
    byte[] expected = acceptProof(request, reply, server, client, clientQpn, serverQpn);
    return MessageDigest.isEqual(expected, Arrays.copyOfRange(reply, 4 + NONCE_LENGTH,
        REPLY_LENGTH)) ? null : "wrong proof (another secret or application, or not an "
        + "answer to this request)";
  }

  // ---- server ----

  /**
   * Null when {@code request} (its first {@code length} bytes) is a fresh request of this
   * application for this server from QP {@code clientQpn} at address {@code client} (as
   * RDMA-CM reports the peer); otherwise why it is refused. An accepted request's nonce is
   * remembered, so the same request is refused next time.
   */
  public String checkRequest(byte[] request, int length, byte[] server, InetAddress client,
      int clientQpn) {
    if (request == null || length < REQUEST_LENGTH) {
      return "no or truncated authentication data (" + Math.max(length, 0) + " of "
          + REQUEST_LENGTH + " bytes): the peer does not use spark.authenticate";
    }
    String version = versionRefusal(request, "request");
    if (version != null) {
      return version;
    }
    long sent = ByteBuffer.wrap(request, 4 + NONCE_LENGTH, 8).getLong();
    long now = clockMs.getAsLong();
    byte[] tag = connectTag(request, server, address(client), clientQpn);
    // Checked before the time, so an unauthenticated peer learns nothing about the clock.
    if (!MessageDigest.isEqual(tag, Arrays.copyOfRange(request, REQUEST_LENGTH - TAG_LENGTH,
        REQUEST_LENGTH))) {
      return "wrong MAC (another secret or application, or for another server, client address "
          + "or queue pair)";
    }
    if (Math.abs(now - sent) > MAX_SKEW_MS) {
      return "stale request: its time is " + (now - sent) + " ms from this clock (at most "
          + MAX_SKEW_MS + "; are the hosts' clocks synchronized?)";
    }
    String peer = PeerGroup.of(client);
    switch (nonces.record(peer, Arrays.copyOfRange(request, 4, 4 + NONCE_LENGTH), sent,
        now)) {
      case REPLAYED:
        return "replayed request (nonce already seen)";
      case PEER_FULL:
        return "too many recent connection requests from " + peer + " (its share of the "
            + "replay cache is full for up to " + 2 * MAX_SKEW_MS / 1000 + " s)";
      case FULL:
        return "too many recent connection requests from all peers (the replay cache is "
            + "full for up to " + 2 * MAX_SKEW_MS / 1000 + " s)";
      default:
        return null;
    }
  }

  /** The accept reply to an accepted {@code request}, proving this side knows the secret. */
  public byte[] reply(byte[] request, byte[] server, byte[] client, int clientQpn,
      int serverQpn) {
    byte[] out = new byte[REPLY_LENGTH];
    System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
    byte[] nonce = new byte[NONCE_LENGTH];
    random.nextBytes(nonce);
    System.arraycopy(nonce, 0, out, 4, NONCE_LENGTH);
    byte[] proof = acceptProof(request, out, server, client, clientQpn, serverQpn);
    System.arraycopy(proof, 0, out, 4 + NONCE_LENGTH, proof.length);
    return out;
  }

  // ---- MACs ----

  /**
   * Null when {@code b} starts with this version's magic; otherwise what it is, naming
   * another version of this plugin so that a mixed deployment says why it fails.
   */
  private static String versionRefusal(byte[] b, String what) {
    if (b[0] != MAGIC[0] || b[1] != MAGIC[1] || b[2] != MAGIC[2]) {
      return "not an authentication " + what + " of shuffle-rdma";
    }
    if (b[3] != MAGIC[3]) {
      return "authentication " + what + " of version " + (b[3] & 0xff) + ", this side "
          + "speaks version " + VERSION + " (version 2 binds the client address): run the "
          + "same shuffle-rdma release on every executor";
    }
    return null;
  }

  private byte[] connectTag(byte[] request, byte[] server, byte[] client, int clientQpn) {
    Mac mac = mac(CONNECT);
    mac.update(request, 0, REQUEST_LENGTH - TAG_LENGTH);
    mac.update(server);
    mac.update(lengthPrefixed(client));
    mac.update(intBytes(clientQpn));
    return Arrays.copyOf(mac.doFinal(), TAG_LENGTH);
  }

  private byte[] acceptProof(byte[] request, byte[] reply, byte[] server, byte[] client,
      int clientQpn, int serverQpn) {
    Mac mac = mac(ACCEPT);
    mac.update(request, 4, NONCE_LENGTH);
    mac.update(reply, 0, 4 + NONCE_LENGTH);
    mac.update(server);
    mac.update(lengthPrefixed(client));
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

  /** The address with its length first, so IPv4 and IPv6 encodings cannot collide. */
  private static byte[] lengthPrefixed(byte[] address) {
    byte[] out = new byte[address.length + 1];
    out[0] = (byte) address.length;
    System.arraycopy(address, 0, out, 1, address.length);
    return out;
  }

  private static byte[] intBytes(int v) {
    return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
  }
}
