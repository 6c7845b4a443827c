/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.spark.shuffle.rdma.transport.verbs.MapModeChoice.Mode;
import org.junit.jupiter.api.Test;

/**
 * Only the kernel's refusal to pin a mapping (EFAULT) moves registration to another mapping;
 * resource and state errors get none (before, any failure switched the executor to private
 * copies for good, doubling pinned memory exactly when memlock had run out). The messages are
 * the native layer's ("<call> failed: <strerror> (errno N)<hint>") as VerbsMemory wraps them.
 */
class MappingRefusalTest {
  private static String wrapped(String nativeMessage) {
    return "registering 4194304 bytes for RDMA READ failed: " + nativeMessage
        + " (usually the locked-memory limit: set memlock to unlimited for the executor, see "
        + "'java -jar shuffle-rdma.jar doctor')";
  }

  @Test
  void efaultMovesToTheNextMapping() {
    String efault = wrapped("ibv_reg_mr failed: Bad address (errno 14)");
    assertEquals(Mode.SHARED_WRITABLE, MappingRefusal.next(Mode.SHARED, efault));
    assertEquals(Mode.PRIVATE, MappingRefusal.next(Mode.SHARED_WRITABLE, efault));
    assertNull(MappingRefusal.next(Mode.PRIVATE, efault), "nothing after private copies");
  }

  @Test
  void resourceAndStateErrorsGetNoFallback() {
    for (String m : new String[] {
        wrapped("ibv_reg_mr failed: Cannot allocate memory (errno 12); raise the memlock limit"),
        wrapped("ibv_reg_mr failed: Resource temporarily unavailable (errno 11)"),
        wrapped("ibv_reg_mr (handle table) failed: Cannot allocate memory (errno 12)"),
        wrapped("ibv_reg_mr: protection domain: null handle (object not created or already "
            + "closed)"),
        "verbs transport is closed",
        wrapped("ibv_reg_mr failed: Operation not permitted (errno 1)"),
        null}) {
      for (Mode mode : Mode.values()) {
        assertNull(MappingRefusal.next(mode, m), mode + " after: " + m);
      }
    }
  }

  @Test
  void theLastErrnoCounts() {
    assertEquals(14, MappingRefusal.errno("x failed: y (errno 12), then z failed (errno 14)"));
    assertEquals(-1, MappingRefusal.errno("no errno here"));
    assertTrue(MappingRefusal.isPinRefusal("ibv_reg_mr failed: Bad address (errno 14)"));
    assertFalse(MappingRefusal.isPinRefusal("ibv_reg_mr failed: Cannot allocate memory (errno 12)"));
  }
}
