/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node service's journal of kept outputs: what is written is replayed by a new journal
 * on the same directory (the next process), releases of one output, a shuffle and an
 * application hold across it, compaction keeps the live records only, and a record torn by a
 * crash mid-append is ignored.
 */
class OutputJournalTest {
  @TempDir
  Path dir;

  private static OutputJournal.Output out(String app, int shuffle, long map, long seq) {
    return new OutputJournal.Output(app, shuffle, map, seq, 100 + map, 8, -1,
        new byte[] {(byte) map, 7, 9});
  }

  private static List<String> names(OutputJournal j) {
    return j.live().stream().map(o -> o.appId + "/" + o.shuffleId + "/" + o.mapId)
        .collect(Collectors.toList());
  }

  @Test
  void replaysWhatWasWrittenAndReleased() throws Exception {
    try (OutputJournal j = new OutputJournal(dir)) {
      j.port(40411);
      j.driver("app-1", "10.0.0.7", 7078);
      for (long m = 1; m <= 4; m++) {
        j.output(out("app-1", 0, m, j.nextSeq()));
      }
      j.output(out("app-1", 1, 9, j.nextSeq()));
      j.output(out("app-2", 0, 5, j.nextSeq()));
      assertEquals(1, j.release("app-1", 0, 2).size(), "one output");
      assertEquals(1, j.release("app-1", 1, -1).size(), "a shuffle");
      assertEquals(0, j.release("app-3", -1, -1).size(), "an unknown application");
    }
    // A new process: same directory, the state as left.
    try (OutputJournal j = new OutputJournal(dir)) {
      assertEquals(List.of("app-1/0/1", "app-1/0/3", "app-1/0/4", "app-2/0/5"), names(j));
      assertEquals(40411, j.port());
      assertEquals("10.0.0.7:7078", j.drivers().get("app-1"));
      OutputJournal.Output o = j.live().get(1);
      assertEquals(103, o.dataSize);
      assertEquals(-1, o.sumsSize);
      assertArrayEquals(new byte[] {3, 7, 9}, o.descriptor);
      assertEquals(7, j.nextSeq(), "a stem no record used");
      assertEquals(3, j.release("app-1", -1, -1).size(), "an application");
    }
    try (OutputJournal j = new OutputJournal(dir)) {
      assertEquals(List.of("app-2/0/5"), names(j));
      assertTrue(j.drivers().isEmpty(), "the released application's driver goes with it");
    }
  }

  @Test
  void compactionKeepsTheLiveRecordsOnly() throws Exception {
    long before;
    try (OutputJournal j = new OutputJournal(dir)) {
      for (long m = 0; m < 50; m++) {
        j.output(out("app-1", 0, m, j.nextSeq()));
      }
      before = Files.size(dir.resolve(OutputJournal.FILE));
      for (long m = 0; m < 40; m++) {
        j.release("app-1", 0, m);
      }
      // Compacted at the 26th release (26 against 24 live) and the 39th (13 against 11).
      assertEquals(1, j.releasedRecords());
    }
    try (OutputJournal j = new OutputJournal(dir)) {
      assertEquals(10, j.live().size());
      assertEquals(0, j.releasedRecords());
      long after = Files.size(dir.resolve(OutputJournal.FILE));
      assertTrue(after < before / 4, "compacted at start: " + after + " bytes, " + before
          + " with 50 outputs");
    }
  }

  @Test
  void aTornLastRecordIsIgnored() throws Exception {
    try (OutputJournal j = new OutputJournal(dir)) {
      j.output(out("app-1", 0, 1, j.nextSeq()));
      j.output(out("app-1", 0, 2, j.nextSeq()));
    }
    Path file = dir.resolve(OutputJournal.FILE);
    byte[] whole = Files.readAllBytes(file);
    // A crash mid-append: the last record's bytes cut short.
    Files.write(file, java.util.Arrays.copyOf(whole, whole.length - 5));
    try (OutputJournal j = new OutputJournal(dir)) {
      assertEquals(List.of("app-1/0/1"), names(j));
      assertEquals(whole.length / 2 - 5, j.tornBytes());
      j.output(out("app-1", 0, 3, j.nextSeq())); // appended after the compacted journal
    }
    // A last record whole in length but with a flipped byte: its checksum fails.
    byte[] now = Files.readAllBytes(file);
    now[now.length - 1] ^= 1;
    Files.write(file, now, StandardOpenOption.TRUNCATE_EXISTING);
    try (OutputJournal j = new OutputJournal(dir)) {
      assertEquals(List.of("app-1/0/1"), names(j));
    }
  }
}
