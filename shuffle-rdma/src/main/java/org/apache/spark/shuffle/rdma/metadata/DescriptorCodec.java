/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.metadata;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Packs descriptors into the compact byte arrays that travel over Spark's RPC.
 *
 * <p>A shuffle's table is a log of records, each a tag byte and its body:
 * {@code PUBLISHED} + an entry ({@link #encodeEntry}); {@code HANDED_OVER} + the id of the
 * executor that handed the output to its node service + an entry naming that service; or
 * {@code RELEASED} + a map id (an uncommitted attempt's output the driver forgot). Records
 * are self-delimiting, so the log can be cut into chunks anywhere and read back by
 * concatenation.
 */
public final class DescriptorCodec {
  static final byte PUBLISHED = 1;
  static final byte RELEASED = 2;
  static final byte HANDED_OVER = 3;

  private DescriptorCodec() {}

  /** One descriptor without a tag; what an executor publishes. */
  public static byte[] encodeEntry(MapOutputDescriptor d) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
      DataOutputStream out = new DataOutputStream(bytes);
      d.writeTo(out);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Decodes one entry; a malformed entry or trailing bytes are an UncheckedIOException. */
  static MapOutputDescriptor decodeEntry(byte[] bytes) {
    try {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
      MapOutputDescriptor d = MapOutputDescriptor.readFrom(in);
      if (in.available() != 0) {
        throw new IOException(in.available() + " trailing bytes");
      }
      return d;
    } catch (IOException e) {
      throw new UncheckedIOException("corrupt descriptor", e);
    }
  }

  /**
   * The log record for a published entry. Decodes the entry first (about a microsecond):
   * one malformed entry appended to the log would make every later reader of the table
   * fail, so it is refused here, at its publisher.
   */
  public static byte[] publishedRecord(int shuffleId, long mapId, byte[] entry) {
    MapOutputDescriptor d = decodeEntry(entry);
    if (d.shuffleId() != shuffleId || d.mapId() != mapId) {
      throw new IllegalArgumentException("entry of " + d + " published as shuffle "
          + shuffleId + " map " + mapId);
    }
    return record(entry);
  }

  /** The log record of an entry already decoded and checked (see MetadataGuard). */
  static byte[] record(byte[] entry) {
    byte[] record = new byte[entry.length + 1];
    record[0] = PUBLISHED;
    System.arraycopy(entry, 0, record, 1, entry.length);
    return record;
  }

  /**
   * The log record of an entry (checked, naming a node service) that executor
   * {@code publisher} handed over: readers resolve the output for blocks Spark lists on
   * {@code publisher}, and only for those.
   */
  static byte[] handedOverRecord(String publisher, byte[] entry) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(entry.length + 16);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeByte(HANDED_OVER);
      out.writeUTF(publisher);
      out.write(entry);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static byte[] releasedRecord(long mapId) {
    return java.nio.ByteBuffer.allocate(9).put(RELEASED).putLong(mapId).array();
  }

  /**
   * Applies the records in {@code chunks} (read as one concatenated stream) to a map id ->
   * descriptor view: a published record adds or replaces, a released one removes.
   * Returns the number of records read.
   */
  public static int apply(byte[][] chunks, Map<Long, MapOutputDescriptor> into) {
    return apply(chunks, into, null);
  }

  /**
   * As {@link #apply(byte[][], Map)}, and keeps in {@code handedOverBy} (when not null) the
   * executor that handed each handed-over output to its node service.
   */
  public static int apply(byte[][] chunks, Map<Long, MapOutputDescriptor> into,
      Map<Long, String> handedOverBy) {
    List<InputStream> parts = new ArrayList<>(chunks.length);
    for (byte[] c : chunks) {
      parts.add(new ByteArrayInputStream(c));
    }
    DataInputStream in = new DataInputStream(
        new SequenceInputStream(Collections.enumeration(parts)));
    int n = 0;
    try {
      for (int tag = in.read(); tag != -1; tag = in.read()) {
        if (tag == PUBLISHED) {
          MapOutputDescriptor d = MapOutputDescriptor.readFrom(in);
          into.put(d.mapId(), d);
          if (handedOverBy != null) {
            handedOverBy.remove(d.mapId());
          }
        } else if (tag == HANDED_OVER) {
          String publisher = in.readUTF();
          MapOutputDescriptor d = MapOutputDescriptor.readFrom(in);
          if (handedOverBy != null) {
            // First: a reader that sees the descriptor must also see who handed it over.
            handedOverBy.put(d.mapId(), publisher);
          }
          into.put(d.mapId(), d);
        } else if (tag == RELEASED) {
          long mapId = in.readLong();
          into.remove(mapId);
          if (handedOverBy != null) {
            handedOverBy.remove(mapId);
          }
        } else {
          throw new IOException("unknown record tag " + tag + " after " + n + " records");
        }
        n++;
      }
      return n;
    } catch (EOFException e) {
      throw new UncheckedIOException("corrupt descriptor table: truncated after " + n
          + " records", e);
    } catch (IOException e) {
      throw new UncheckedIOException("corrupt descriptor table", e);
    }
  }
}
