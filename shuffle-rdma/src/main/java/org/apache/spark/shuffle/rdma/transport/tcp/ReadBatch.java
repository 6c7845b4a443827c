/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.apache.spark.network.protocol.Message;
import org.apache.spark.network.protocol.StreamChunkId;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;

/**
 * How a batch of one-sided reads travels on the tcp transport, inside network-common's
 * messages. One request and one answer frame per batch, so the server decodes, checks and
 * flushes once per batch instead of once per read, and writes one header per batch (a
 * header between every two blocks would cost a write system call per block next to each
 * block's sendfile).
 *
 * <p>Request: an RpcRequest whose body is {@code 'B', batch id (long), n (int)} and n times
 * {@code key (int), address (long), length (int)}. The key and the address's upper half
 * together are the region's capability (see {@link RegionServer}). At most {@link
 * #MAX_READS} reads, so the frame is at most {@link #MAX_FRAME} bytes, under the server's
 * smallest {@code tcp.maxRequestFrameSize}; a batch of several reads asks for at most
 * {@link #TARGET_BYTES}, a batch of one read for at most {@code maxReadSize}: the server
 * refuses anything else whole, so one request can never make it queue more than that. The
 * server answers the RPC itself only when it refuses the batch whole (an RpcFailure of one
 * line), and then closes the connection.
 *
 * <p>Answer: a ChunkFetchSuccess for stream chunk ({@code batch id}, 0) whose body is
 * {@code n (int)}, then per read either its length (the read was served: its bytes follow in
 * the data part) or -1, a 2-byte length and a UTF-8 reason (refused: only that read fails),
 * then the served reads' bytes in request order.
 */
final class ReadBatch {
  static final byte MAGIC = 'B';
  static final int MAX_READS = 64;
  /**
   * A batch is closed before it would hold more than this many bytes (a longer read goes
   * alone): the client takes in a batch's answer whole before any read of it completes, so
   * batches stay small enough that several are in flight. Measured against 64 KiB and 1 MiB
   * (docs/benchmarks.md): 64 KiB served 4 KiB blocks best but sent 64 KiB blocks one per
   * batch; 1 MiB did worst at 4 KiB.
   */
  static final int TARGET_BYTES = 256 << 10;
  static final int REFUSED = -1;
  private static final int MAX_REASON_BYTES = 1024;
  private static final int READ_BYTES = 4 + 8 + 4;
  private static final int HEADER_BYTES = 1 + 8 + 4;
  /** The largest request frame: network-common's RpcRequest header and a full batch. */
  static final int MAX_FRAME = 8 + 1 + 8 + 4 + HEADER_BYTES + MAX_READS * READ_BYTES;
  /** Batch ids stay below 2^32 (the client's counter wraps there). */
  static final long MAX_BATCH_ID = 0xFFFFFFFFL;

  private ReadBatch() {}

  static StreamChunkId answerId(long batchId) {
    return new StreamChunkId(batchId, 0);
  }

  /**
   * The whole request frame, as network-common's encoder would write an RpcRequest (8-byte
   * frame length, type, request id = batch id, body length, body), in one plain buffer: its
   * encoder writes a message with a body as a {@code MessageWithHeader}, which costs a write
   * system call for the header and one for the body, per batch; plain buffers of a flush
   * leave in one gathering write.
   */
  static ByteBuf encodeRequestFrame(ByteBufAllocator alloc, long batchId,
      List<ReadRequest> reads) {
    int body = HEADER_BYTES + READ_BYTES * reads.size();
    int headerLength = 8 + Message.Type.RpcRequest.encodedLength() + 8 + 4;
    ByteBuf b = alloc.directBuffer(headerLength + body);
    b.writeLong(headerLength + body); // the frame length counts itself
    Message.Type.RpcRequest.encode(b);
    b.writeLong(batchId); // RpcRequest: request id, then the body's length
    b.writeInt(body);
    b.writeByte(MAGIC).writeLong(batchId).writeInt(reads.size());
    for (ReadRequest r : reads) {
      b.writeInt(r.key()).writeLong(r.remoteAddress()).writeInt(r.length());
    }
    return b;
  }

  /** A decoded request: reads as parallel arrays (no object per read on the server). */
  static final class Request {
    final long batchId;
    final int[] keys;
    final long[] addresses;
    final int[] lengths;

    private Request(long batchId, int n) {
      this.batchId = batchId;
      this.keys = new int[n];
      this.addresses = new long[n];
      this.lengths = new int[n];
    }

    int size() {
      return keys.length;
    }
  }

  /**
   * Decodes a request; a malformed one, or one asking for more than a batch may (see the
   * class comment), is refused whole (Refusal).
   */
  static Request decodeRequest(ByteBuffer b, long maxSingleRead) {
    if (b.remaining() < HEADER_BYTES || b.get() != MAGIC) {
      throw new Refusal("not a read batch: the tcp transport answers one-sided reads only");
    }
    long batchId = b.getLong();
    int n = b.getInt();
    if (batchId <= 0 || batchId > MAX_BATCH_ID) {
      throw new Refusal("read batch id out of range: " + batchId);
    }
    if (n < 1 || n > MAX_READS || b.remaining() != (long) n * READ_BYTES) {
      throw new Refusal("malformed read batch: " + n + " reads announced, "
          + b.remaining() + " bytes follow (1 to " + MAX_READS + " reads of " + READ_BYTES
          + " bytes expected)");
    }
    Request req = new Request(batchId, n);
    long asked = 0;
    for (int i = 0; i < n; i++) {
      req.keys[i] = b.getInt();
      req.addresses[i] = b.getLong();
      req.lengths[i] = b.getInt();
      asked += Math.max(0, req.lengths[i]);
    }
    long cap = n == 1 ? maxSingleRead : TARGET_BYTES;
    if (asked > cap) {
      throw new Refusal("read batch asks for " + asked + " bytes, at most " + cap
          + " are allowed for " + n + (n == 1 ? " read" : " reads"));
    }
    return req;
  }

  /** Appends a refusal to an answer's prefix. */
  static void writeRefusal(ByteBuf prefix, String reason) {
    byte[] utf8 = reason.getBytes(StandardCharsets.UTF_8);
    int len = Math.min(utf8.length, MAX_REASON_BYTES);
    prefix.writeInt(REFUSED);
    prefix.writeShort(len);
    prefix.writeBytes(utf8, 0, len);
  }

  /**
   * Reads an answer's prefix for {@code expected} reads: fills {@code lengths} (the served
   * length, or REFUSED with the reason in {@code reasons}) and returns the offset of the data
   * part. Throws IllegalArgumentException when the answer does not fit the request.
   */
  static int parseAnswer(ByteBuf body, List<ReadRequest> expected, int[] lengths,
      String[] reasons) {
    int start = body.readerIndex();
    int end = body.writerIndex();
    int at = start;
    if (end - at < 4 || body.getInt(at) != expected.size()) {
      throw new IllegalArgumentException("answer does not match its batch of "
          + expected.size() + " reads");
    }
    at += 4;
    long data = 0;
    for (int i = 0; i < expected.size(); i++) {
      if (end - at < 4) {
        throw new IllegalArgumentException("answer prefix cut short at read " + i);
      }
      int status = body.getInt(at);
      at += 4;
      if (status == REFUSED) {
        if (end - at < 2) {
          throw new IllegalArgumentException("answer prefix cut short at read " + i);
        }
        int len = body.getUnsignedShort(at);
        at += 2;
        if (end - at < len) {
          throw new IllegalArgumentException("answer prefix cut short at read " + i);
        }
        reasons[i] = body.toString(at, len, StandardCharsets.UTF_8);
        at += len;
      } else if (status != expected.get(i).length()) {
        throw new IllegalArgumentException("answer gives " + status + " bytes for "
            + expected.get(i));
      } else {
        data += status;
      }
      lengths[i] = status;
    }
    if (end - at != data) {
      throw new IllegalArgumentException("answer carries " + (end - at) + " data bytes, its "
          + "prefix announces " + data);
    }
    return at - start;
  }
}
