/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * The node service's append-only journal of kept outputs: one fsync'd record per hand-over
 * (the output, its links' stem and sizes, the descriptor readers were told), per release,
 * per driver announcement, and the tcp port readers were told. Replayed at start into the
 * live outputs; rewritten with the live records only (compaction) at start and whenever
 * released records outnumber the live ones. Each record is framed as length, CRC32, body: a
 * record torn by a crash mid-append fails its length or checksum and ends the replay (it and
 * anything after it are dropped by the next compaction).
 */
final class OutputJournal implements Closeable {
  static final String FILE = "journal";
  private static final byte OUTPUT = 1;
  private static final byte RELEASE = 2;
  private static final byte DRIVER = 3;
  private static final byte PORT = 4;
  /** A record longer than this is not one this service wrote (a torn length). */
  private static final int MAX_RECORD = 1 << 20;

  /** One kept output, as journaled at its hand-over. */
  static final class Output {
    final String appId;
    final int shuffleId;
    final long mapId;
    /** The stem of its links in the state directory. */
    final long seq;
    final long dataSize;
    final long indexSize;
    /** -1: no checksum file. */
    final long sumsSize;
    /** MapOutputDescriptor.writeTo bytes: the addresses and keys readers were told. */
    final byte[] descriptor;

    Output(String appId, int shuffleId, long mapId, long seq, long dataSize, long indexSize,
        long sumsSize, byte[] descriptor) {
      this.appId = appId;
      this.shuffleId = shuffleId;
      this.mapId = mapId;
      this.seq = seq;
      this.dataSize = dataSize;
      this.indexSize = indexSize;
      this.sumsSize = sumsSize;
      this.descriptor = descriptor;
    }
  }

  private final Path file;
  private FileChannel channel;
  /** app, shuffle, map: the live outputs. */
  private final Map<String, Map<Integer, Map<Long, Output>>> live = new LinkedHashMap<>();
  private final Map<String, String> drivers = new LinkedHashMap<>();
  private int port;
  private long nextSeq = 1;
  private int liveCount;
  private int releasedRecords;
  private long tornBytes;

  /** Replays {@code dir}/journal (absent: empty), then compacts it. */
  OutputJournal(Path dir) throws IOException {
    this.file = dir.resolve(FILE);
    if (Files.exists(file)) {
      replay(Files.readAllBytes(file));
    }
    compact();
  }

  private void replay(byte[] all) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(all);
    while (b.remaining() >= 8) {
      int length = b.getInt();
      int crc = b.getInt();
      if (length <= 0 || length > MAX_RECORD || length > b.remaining()) {
        b.position(b.position() - 8);
        break;
      }
      byte[] body = new byte[length];
      b.get(body);
      if (crc32(body) != crc) {
        b.position(b.position() - 8 - length);
        break;
      }
      apply(new DataInputStream(new java.io.ByteArrayInputStream(body)));
    }
    tornBytes = b.remaining();
  }

  private void apply(DataInputStream in) throws IOException {
    byte kind = in.readByte();
    switch (kind) {
      case OUTPUT: {
        Output o = new Output(in.readUTF(), in.readInt(), in.readLong(), in.readLong(),
            in.readLong(), in.readLong(), in.readLong(), readBytes(in));
        nextSeq = Math.max(nextSeq, o.seq + 1);
        put(o);
        break;
      }
      case RELEASE:
        remove(in.readUTF(), in.readInt(), in.readLong());
        releasedRecords++;
        break;
      case DRIVER:
        drivers.put(in.readUTF(), in.readUTF() + ":" + in.readInt());
        break;
      case PORT:
        port = in.readInt();
        break;
      default:
        throw new IOException("journal record of unknown kind " + kind);
    }
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    byte[] b = new byte[in.readInt()];
    in.readFully(b);
    return b;
  }

  private void put(Output o) {
    Output old = live.computeIfAbsent(o.appId, a -> new LinkedHashMap<>())
        .computeIfAbsent(o.shuffleId, s -> new LinkedHashMap<>()).put(o.mapId, o);
    if (old == null) {
      liveCount++;
    }
  }

  /** Removes (app, shuffle or -1: all, map or -1: all); returns what it removed. */
  private List<Output> remove(String appId, int shuffleId, long mapId) {
    List<Output> gone = new ArrayList<>();
    Map<Integer, Map<Long, Output>> app = live.get(appId);
    if (app != null) {
      for (Map.Entry<Integer, Map<Long, Output>> s : app.entrySet()) {
        if (shuffleId < 0 || s.getKey() == shuffleId) {
          if (mapId < 0) {
            gone.addAll(s.getValue().values());
            s.getValue().clear();
          } else {
            Output o = s.getValue().remove(mapId);
            if (o != null) {
              gone.add(o);
            }
          }
        }
      }
      app.values().removeIf(Map::isEmpty);
      if (app.isEmpty()) {
        live.remove(appId);
      }
    }
    if (shuffleId < 0 && mapId < 0) {
      drivers.remove(appId);
    }
    liveCount -= gone.size();
    return gone;
  }

  /** A new stem for an output's links (never one a live or released record used). */
  synchronized long nextSeq() {
    return nextSeq++;
  }

  /** Journals a kept output (fsync'd before it returns). */
  synchronized void output(Output o) throws IOException {
    append(encodeOutput(o));
    put(o);
  }

  /**
   * Journals a release and returns the outputs it ended (their links are the caller's to
   * delete); nothing is written when it ends none and names no driver.
   */
  synchronized List<Output> release(String appId, int shuffleId, long mapId)
      throws IOException {
    boolean driver = shuffleId < 0 && mapId < 0 && drivers.containsKey(appId);
    List<Output> gone = remove(appId, shuffleId, mapId);
    if (gone.isEmpty() && !driver) {
      return gone;
    }
    append(record(RELEASE, out -> {
      out.writeUTF(appId);
      out.writeInt(shuffleId);
      out.writeLong(mapId);
    }));
    releasedRecords++;
    if (releasedRecords > liveCount) {
      compact();
    }
    return gone;
  }

  /** Journals the driver an application named (its lease starts fresh after a restart). */
  synchronized void driver(String appId, String host, int driverPort) throws IOException {
    String now = host + ":" + driverPort;
    if (!now.equals(drivers.put(appId, now))) {
      append(record(DRIVER, out -> {
        out.writeUTF(appId);
        out.writeUTF(host);
        out.writeInt(driverPort);
      }));
    }
  }

  /** Journals the tcp port readers are told. */
  synchronized void port(int tcpPort) throws IOException {
    if (tcpPort != port) {
      port = tcpPort;
      append(record(PORT, out -> out.writeInt(tcpPort)));
    }
  }

  /** The tcp port journaled last; 0: none. */
  synchronized int port() {
    return port;
  }

  /** The drivers named, "host:port" per application. */
  synchronized Map<String, String> drivers() {
    return new LinkedHashMap<>(drivers);
  }

  /** The live outputs, in hand-over order per shuffle. */
  synchronized List<Output> live() {
    List<Output> all = new ArrayList<>();
    for (Map<Integer, Map<Long, Output>> app : live.values()) {
      for (Map<Long, Output> s : app.values()) {
        all.addAll(s.values());
      }
    }
    return all;
  }

  /** Bytes at the end of the journal found torn at start (dropped by the compaction). */
  long tornBytes() {
    return tornBytes;
  }

  /** Release records since the last compaction. */
  synchronized int releasedRecords() {
    return releasedRecords;
  }

  /**
   * Rewrites the journal with the live records only: a new file, fsync'd, renamed over the
   * old one, the directory fsync'd, so a crash leaves one or the other whole.
   */
  synchronized void compact() throws IOException {
    Path tmp = file.resolveSibling(FILE + ".tmp");
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      if (port != 0) {
        write(out, record(PORT, o -> o.writeInt(port)));
      }
      for (Map.Entry<String, String> d : drivers.entrySet()) {
        int colon = d.getValue().lastIndexOf(':');
        write(out, record(DRIVER, o -> {
          o.writeUTF(d.getKey());
          o.writeUTF(d.getValue().substring(0, colon));
          o.writeInt(Integer.parseInt(d.getValue().substring(colon + 1)));
        }));
      }
      for (Output o : live()) {
        write(out, encodeOutput(o));
      }
      out.force(true);
    }
    if (channel != null) {
      channel.close();
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDirectory(file.getParent());
    channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    releasedRecords = 0;
  }

  /** fsync of a directory: a link, rename or removal in it reaches the disk. */
  static void syncDirectory(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  private void append(ByteBuffer record) throws IOException {
    write(channel, record);
    channel.force(false);
  }

  private static void write(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  private static ByteBuffer encodeOutput(Output o) throws IOException {
    return record(OUTPUT, out -> {
      out.writeUTF(o.appId);
      out.writeInt(o.shuffleId);
      out.writeLong(o.mapId);
      out.writeLong(o.seq);
      out.writeLong(o.dataSize);
      out.writeLong(o.indexSize);
      out.writeLong(o.sumsSize);
      out.writeInt(o.descriptor.length);
      out.write(o.descriptor);
    });
  }

  private interface Body {
    void write(DataOutputStream out) throws IOException;
  }

  private static ByteBuffer record(byte kind, Body body) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeByte(kind);
    body.write(out);
    out.flush();
    byte[] b = bytes.toByteArray();
    ByteBuffer r = ByteBuffer.allocate(8 + b.length);
    r.putInt(b.length).putInt(crc32(b)).put(b).flip();
    return r;
  }

  private static int crc32(byte[] b) {
    CRC32 c = new CRC32();
    c.update(b, 0, b.length);
    return (int) c.getValue();
  }

  @Override
  public synchronized void close() throws IOException {
    if (channel != null) {
      channel.close();
    }
  }
}
