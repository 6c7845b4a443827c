/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.util.ArrayList;
import java.util.List;

/** Named pass/fail checks: each is printed as it is made; the run fails if any failed. */
final class Checks {
  private final List<String> failed = new ArrayList<>();
  private String scope = "";

  /** Names the workload the following checks belong to ("" for none): "skew: ..." etc. */
  void scope(String workload) {
    scope = workload.isEmpty() ? "" : workload + ": ";
  }

  /** Records and prints one check. */
  boolean check(String unscoped, boolean ok, String detail) {
    String name = scope + unscoped;
    System.out.println("== check " + (ok ? "ok    " : "FAILED") + " " + name + ": " + detail);
    if (!ok) {
      failed.add(name);
    }
    return ok;
  }

  /** Prints a fact that is not a check (a skipped check says why). */
  void note(String line) {
    System.out.println("== note " + line);
  }

  boolean allPassed() {
    return failed.isEmpty();
  }

  List<String> failed() {
    return List.copyOf(failed);
  }
}
