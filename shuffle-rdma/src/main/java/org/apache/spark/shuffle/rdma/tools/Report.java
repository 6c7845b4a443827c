/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.tools;

import java.io.PrintStream;

/** The doctor's output: one line per check, a fix under each failure, a summary. */
final class Report {
  private final PrintStream out;
  private int failures;
  private int warnings;

  Report(PrintStream out) {
    this.out = out;
  }

  void ok(String what) {
    out.println("[ OK ] " + what);
  }

  void info(String what) {
    out.println("[INFO] " + what);
  }

  void warn(String what, String fix) {
    warnings++;
    out.println("[WARN] " + what);
    if (fix != null) {
      out.println("       fix: " + fix);
    }
  }

  void fail(String what, String fix) {
    failures++;
    out.println("[FAIL] " + what);
    if (fix != null) {
      out.println("       fix: " + fix);
    }
  }

  /** Prints the verdict; returns the exit status (0: verbs can run here). */
  int finish() {
    out.println();
    if (failures == 0) {
      out.println("verbs transport can run on this host" + (warnings > 0 ? " (" + warnings
          + " warning(s) above)" : "") + ".");
      return 0;
    }
    out.println(failures + " check(s) failed: the verbs transport cannot run on this host; "
        + "with spark.shuffle.rdma.transport=auto the shuffle falls back to tcp.");
    return 1;
  }
}
