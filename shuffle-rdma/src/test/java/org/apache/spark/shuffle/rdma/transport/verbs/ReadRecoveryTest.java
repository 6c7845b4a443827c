/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.rdma.transport.verbs.ReadRecovery.Verdict;
import org.junit.jupiter.api.Test;

/**
 * The error-isolation state machine driven by fake completion streams shaped like what an RC
 * QP produces: completions in post order, the first error, then every later read flushed.
 */
class ReadRecoveryTest {

  /** A fake connection: reads posted in order, completions replayed through the machine. */
  private static final class FakeConnection {
    final ReadRecovery<String> recovery = new ReadRecovery<>();
    final List<String> posted = new ArrayList<>();
    final Map<String, Verdict> verdicts = new LinkedHashMap<>();

    FakeConnection post(List<String> reads, boolean asRetries) {
      for (String r : reads) {
        if (asRetries) {
          recovery.markRetry(r);
        }
        posted.add(r);
      }
      return this;
    }

    /**
     * The device's behaviour: reads complete in order; the first one in {@code bad} fails
     * with {@code status}, and every read after it is flushed (the QP is in error).
     */
    FakeConnection run(List<String> bad, int status) {
      boolean inError = false;
      for (String r : posted) {
        int st;
        if (inError) {
          st = WcStatus.WR_FLUSH_ERR;
        } else if (bad.contains(r)) {
          st = status;
          inError = true;
        } else {
          st = WcStatus.SUCCESS;
        }
        verdicts.put(r, recovery.onCompletion(r, st));
      }
      return this;
    }

    List<String> with(Verdict v) {
      List<String> out = new ArrayList<>();
      verdicts.forEach((r, x) -> {
        if (x == v) {
          out.add(r);
        }
      });
      return out;
    }
  }

  private static List<String> reads(String prefix, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(prefix + i);
    }
    return out;
  }

  @Test
  void oneBadReadFailsAloneAndTheFlushedOnesSucceedOnAFreshConnection() {
    List<String> all = reads("r", 20);
    FakeConnection first = new FakeConnection().post(all, false)
        .run(List.of("r5"), WcStatus.REM_ACCESS_ERR);
    assertEquals(List.of("r5"), first.with(Verdict.FAIL));
    assertEquals(all.subList(0, 5), first.with(Verdict.DELIVER));
    assertEquals(all.subList(6, 20), first.with(Verdict.RETRY));
    assertEquals(ReadRecovery.State.BROKEN_BY_READ_ERROR, first.recovery.state());
    // Reads that were waiting in the channel move too.
    assertEquals(Verdict.RETRY, first.recovery.onDropped("w0"));

    List<String> again = new ArrayList<>(first.with(Verdict.RETRY));
    again.add("w0");
    FakeConnection second = new FakeConnection().post(again, true).run(List.of(), 0);
    assertEquals(again, second.with(Verdict.DELIVER));
    assertEquals(0, second.recovery.retriesTracked(), "finished reads must not stay tracked");
  }

  @Test
  void aReadFlushedASecondTimeFails() {
    FakeConnection first = new FakeConnection().post(reads("r", 6), false)
        .run(List.of("r1"), WcStatus.REM_ACCESS_ERR);
    List<String> retried = first.with(Verdict.RETRY);
    assertEquals(List.of("r2", "r3", "r4", "r5"), retried);
    // On the fresh connection r3 has a bad key too: it fails, r2 succeeds, r4 and r5 are
    // flushed again and fail now instead of moving on forever.
    FakeConnection second = new FakeConnection().post(retried, true)
        .run(List.of("r3"), WcStatus.REM_ACCESS_ERR);
    assertEquals(List.of("r2"), second.with(Verdict.DELIVER));
    assertEquals(List.of("r3", "r4", "r5"), second.with(Verdict.FAIL));
    assertTrue(second.with(Verdict.RETRY).isEmpty());
    // A waiting read that already is a second attempt fails too.
    second.recovery.markRetry("w");
    assertEquals(Verdict.FAIL, second.recovery.onDropped("w"));
  }

  @Test
  void newReadsOnTheSecondConnectionStillGetTheirOwnRetry() {
    FakeConnection second = new FakeConnection().post(List.of("old"), true)
        .post(List.of("new0", "new1"), false).run(List.of("new0"), WcStatus.REM_ACCESS_ERR);
    assertEquals(Verdict.DELIVER, second.verdicts.get("old"));
    assertEquals(Verdict.FAIL, second.verdicts.get("new0"));
    assertEquals(Verdict.RETRY, second.verdicts.get("new1"));
  }

  @Test
  void aConnectionBrokenWithoutAReadErrorFailsEverything() {
    // A read timeout or a lost peer: the channel fails first, then the device flushes.
    FakeConnection flushed = new FakeConnection().post(reads("r", 4), false);
    flushed.recovery.onConnectionFailure();
    for (String r : flushed.posted) {
      flushed.verdicts.put(r, flushed.recovery.onCompletion(r, WcStatus.WR_FLUSH_ERR));
    }
    assertEquals(reads("r", 4), flushed.with(Verdict.FAIL));
    assertEquals(Verdict.FAIL, flushed.recovery.onDropped("waiting"));
    // A read error after the break does not turn it into a recoverable one.
    assertEquals(Verdict.FAIL, flushed.recovery.onCompletion("x", WcStatus.REM_ACCESS_ERR));
    assertEquals(ReadRecovery.State.BROKEN, flushed.recovery.state());
  }

  @Test
  void aFlushWhileActiveMeansTheConnectionBrokeUnnoticed() {
    ReadRecovery<String> r = new ReadRecovery<>();
    assertTrue(r.needsFailureBefore(WcStatus.WR_FLUSH_ERR));
    assertTrue(!r.needsFailureBefore(WcStatus.SUCCESS));
    r.onConnectionFailure();
    assertEquals(Verdict.FAIL, r.onCompletion("a", WcStatus.WR_FLUSH_ERR));
  }

  @Test
  void everyErrorStatusButFlushIsTheReadsOwn() {
    for (int st : new int[] {1, 4, 9, 10, 11, 12, 13, 15, 21}) {
      FakeConnection c = new FakeConnection().post(List.of("a", "b"), false)
          .run(List.of("a"), st);
      assertEquals(Verdict.FAIL, c.verdicts.get("a"), WcStatus.name(st));
      assertEquals(Verdict.RETRY, c.verdicts.get("b"), WcStatus.name(st));
    }
  }
}
