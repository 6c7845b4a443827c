/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import io.netty.buffer.ByteBuf;

/**
 * Checks a whole frame that arrives before its connection authenticated, before any of
 * Spark's decoders sees it. Spark's auth decoders allocate every length a message declares
 * before checking it against the bytes that came (a 14-byte frame can ask for 2 GiB), so
 * here every declared length is held against the frame first.
 *
 * <p>The only frame a peer may send before authenticating is an RpcRequest carrying one
 * handshake message of the mode this server runs: Spark's auth engine ({@code AuthMessage}:
 * tag 0xFB, the app id, the salt and the ciphertext, each an int length and its bytes) when
 * spark.network.crypto.enabled, else SASL ({@code SaslMessage}: tag 0xEA, the app id as an
 * int length and its bytes, an int body length and the body). network-common frames an
 * RpcRequest as an 8-byte frame length (counting itself), type 3, an 8-byte request id, an
 * int body length and the body.
 */
final class HandshakeFrames {
  /** Largest frame accepted before authentication; handshake messages are a few hundred bytes. */
  static final int MAX_FRAME = 4096;
  static final byte RPC_REQUEST = 3;
  static final byte AUTH_ENGINE_TAG = (byte) 0xFB;
  static final byte SASL_TAG = (byte) 0xEA;
  static final int RPC_HEADER = 8 + 1 + 8 + 4;

  private HandshakeFrames() {}

  /**
   * Null when {@code frame} (readable bytes: exactly one frame, its length header included)
   * is a well-formed handshake message of the expected kind, else why not.
   */
  static String problem(ByteBuf frame, boolean authEngine) {
    int at = frame.readerIndex();
    int end = frame.writerIndex();
    if (end - at < RPC_HEADER + 1) {
      return "frame too short for a handshake message";
    }
    if (frame.getLong(at) != end - at) {
      return "frame length does not match the bytes of the frame";
    }
    if (frame.getByte(at + 8) != RPC_REQUEST) {
      return "message type " + frame.getByte(at + 8) + " before authentication";
    }
    if (frame.getInt(at + 17) != end - at - RPC_HEADER) {
      return "request body length does not match the frame";
    }
    at += RPC_HEADER;
    byte tag = frame.getByte(at++);
    if (tag != (authEngine ? AUTH_ENGINE_TAG : SASL_TAG)) {
      return "not a " + (authEngine ? "auth engine" : "SASL") + " handshake message";
    }
    if (authEngine) {
      for (int field = 0; field < 3; field++) { // app id, salt, ciphertext
        at = skipSized(frame, at, end);
        if (at < 0) {
          return "a declared length exceeds the frame";
        }
      }
      return at == end ? null : "bytes after the handshake message";
    }
    at = skipSized(frame, at, end); // app id
    if (at < 0 || end - at < 4) {
      return "a declared length exceeds the frame";
    }
    return frame.getInt(at) == end - at - 4 ? null : "SASL body length does not match the frame";
  }

  /** Skips an int length and that many bytes; -1 when they do not fit before {@code end}. */
  private static int skipSized(ByteBuf b, int at, int end) {
    if (end - at < 4) {
      return -1;
    }
    int n = b.getInt(at);
    at += 4;
    return n < 0 || n > end - at ? -1 : at + n;
  }
}
