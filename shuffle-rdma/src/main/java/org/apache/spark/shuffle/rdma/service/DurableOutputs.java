/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.shuffle.rdma.fdpass.Fds;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;

/**
 * Keeps the outputs of the shared tcp transport across restarts of the service: each
 * accepted hand-over's files get a hard link in the state directory and a journal record
 * (with the descriptor readers were told); each release journals and deletes them. A file
 * the kernel will not link (EXDEV: the state directory is on another filesystem than the
 * shuffle files) is served but not kept, and counted.
 */
final class DurableOutputs implements Closeable {
  static final String LINKS = "outputs";
  private static final String[] SUFFIXES = {".data", ".index", ".sums"};

  private final Path dir;
  private final Path links;
  private final OutputJournal journal;
  private final ServiceLog log;
  private final AtomicLong kept = new AtomicLong();
  private final AtomicLong notKept = new AtomicLong();
  private final Set<Integer> errnosLogged = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Opens (creating) the state directory, replays and compacts its journal. */
  DurableOutputs(Path dir, int uid, ServiceLog log) throws IOException {
    this.dir = StateDir.open(dir, uid);
    this.links = Files.createDirectories(dir.resolve(LINKS));
    this.log = log;
    this.journal = new OutputJournal(dir);
    if (journal.tornBytes() > 0) {
      log.info("state " + dir + ": the journal's last " + journal.tornBytes() + " bytes were "
          + "a torn record (a crash mid-write), dropped");
    }
    removeOrphans();
  }

  /** Links no live record names: a crash between a link and its record, or a release. */
  private void removeOrphans() throws IOException {
    Set<String> named = new HashSet<>();
    for (OutputJournal.Output o : journal.live()) {
      for (String s : SUFFIXES) {
        named.add(stem(o.seq) + s);
      }
    }
    try (DirectoryStream<Path> all = Files.newDirectoryStream(links)) {
      for (Path p : all) {
        if (!named.contains(p.getFileName().toString())) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  Path dir() {
    return dir;
  }

  /** The tcp port journaled last; 0: none. */
  int port() {
    return journal.port();
  }

  void port(int port) throws IOException {
    journal.port(port);
  }

  List<OutputJournal.Output> live() {
    return journal.live();
  }

  java.util.Map<String, String> drivers() {
    return journal.drivers();
  }

  /** The link of one of an output's files: 0 data, 1 index, 2 checksums. */
  Path link(OutputJournal.Output o, int file) {
    return links.resolve(stem(o.seq) + SUFFIXES[file]);
  }

  private static String stem(long seq) {
    return "o" + seq;
  }

  /**
   * Keeps an accepted hand-over: its files linked, then journaled. Never fails the
   * hand-over: an output that cannot be kept is served until this process ends.
   */
  void handedOver(String appId, int[] fds, MapOutputDescriptor d) {
    long seq = journal.nextSeq();
    long[] sizes = {0, 0, -1};
    int linked = 0;
    try {
      for (; linked < fds.length; linked++) {
        Path target = links.resolve(stem(seq) + SUFFIXES[linked]);
        int errno = Fds.link(fds[linked], target);
        if (errno != 0) {
          notKept(appId, d, errno);
          deleteLinks(seq, linked);
          return;
        }
        sizes[linked] = Files.size(target);
      }
      OutputJournal.syncDirectory(links);
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      d.writeTo(new DataOutputStream(b));
      journal.output(new OutputJournal.Output(appId, d.shuffleId(), d.mapId(), seq, sizes[0],
          sizes[1], sizes[2], b.toByteArray()));
      kept.incrementAndGet();
    } catch (IOException | RuntimeException e) {
      notKept.incrementAndGet();
      log.info("state: " + appId + " shuffle " + d.shuffleId() + " map " + d.mapId()
          + " is served but not kept across a restart: " + e.getMessage());
      deleteLinks(seq, linked);
    }
  }

  private void notKept(String appId, MapOutputDescriptor d, int errno) {
    long n = notKept.incrementAndGet();
    // Once per reason: a state directory on another filesystem refuses every output.
    if (errnosLogged.add(errno)) {
      log.info("state: " + appId + " shuffle " + d.shuffleId() + " map " + d.mapId()
          + " is served but NOT kept across a restart: linking it into " + links + " failed: "
          + Fds.errorText(errno) + (errno == Fds.EXDEV ? "; the state directory must be on "
              + "the filesystem of the executors' shuffle files (spark.local.dir), use "
              + "--state-dir there" : "") + " (further outputs refused for this reason are "
              + "counted, not logged; " + n + " so far)");
    }
  }

  /** Journals a release (shuffle or map -1: all) and deletes the links of what it ended. */
  void released(String appId, int shuffleId, long mapId) {
    try {
      for (OutputJournal.Output o : journal.release(appId, shuffleId, mapId)) {
        deleteLinks(o.seq, SUFFIXES.length);
      }
    } catch (IOException | RuntimeException e) {
      log.info("state: journaling the release of " + appId + " failed (it is released now; "
          + "a restart would serve it again until its lease ends): " + e.getMessage());
    }
  }

  void driver(String appId, String host, int port) {
    try {
      journal.driver(appId, host, port);
    } catch (IOException e) {
      log.info("state: journaling the driver of " + appId + " failed: " + e.getMessage());
    }
  }

  /** Deletes an output whose restore failed: it is gone from the state. */
  void dropRestored(OutputJournal.Output o) {
    released(o.appId, o.shuffleId, o.mapId);
  }

  private void deleteLinks(long seq, int files) {
    for (int i = 0; i < files; i++) {
      try {
        Files.deleteIfExists(links.resolve(stem(seq) + SUFFIXES[i]));
      } catch (IOException e) {
        // removed as an orphan at the next start
      }
    }
  }

  /** Outputs kept and outputs served without being kept, since start. */
  long kept() {
    return kept.get();
  }

  long notKept() {
    return notKept.get();
  }

  @Override
  public void close() throws IOException {
    journal.close();
  }
}
