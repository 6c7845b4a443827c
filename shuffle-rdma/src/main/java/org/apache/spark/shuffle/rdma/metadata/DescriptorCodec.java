package org.apache.spark.shuffle.rdma.metadata;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Packs descriptors into the compact byte arrays that travel over Spark's RPC. */
public final class DescriptorCodec {
  private DescriptorCodec() {}

  /** One descriptor without a count prefix; the driver concatenates these into a table. */
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

  /** A table from entries made by {@link #encodeEntry}: a count, then the entries. */
  public static byte[] table(Collection<byte[]> entries) {
    int size = 4;
    for (byte[] e : entries) {
      size += e.length;
    }
    java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(size);
    buf.putInt(entries.size());
    for (byte[] e : entries) {
      buf.put(e);
    }
    return buf.array();
  }

  public static byte[] encodeAll(Collection<MapOutputDescriptor> ds) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 * Math.max(1, ds.size()));
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeInt(ds.size());
      for (MapOutputDescriptor d : ds) {
        d.writeTo(out);
      }
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static List<MapOutputDescriptor> decodeAll(byte[] bytes) {
    try {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
      int n = in.readInt();
      if (n < 0) {
        throw new IOException("corrupt descriptor table: count " + n);
      }
      List<MapOutputDescriptor> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(MapOutputDescriptor.readFrom(in));
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("corrupt descriptor table", e);
    }
  }

  public static MapOutputDescriptor decodeEntry(byte[] bytes) {
    try {
      return MapOutputDescriptor.readFrom(new DataInputStream(new ByteArrayInputStream(bytes)));
    } catch (IOException e) {
      throw new UncheckedIOException("corrupt descriptor", e);
    }
  }
}
