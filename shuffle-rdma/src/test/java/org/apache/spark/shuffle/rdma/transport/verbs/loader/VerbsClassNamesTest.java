/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Every class the plugin names by string exists, and sits where the isolated loader looks. */
class VerbsClassNamesTest {

  @Test
  void everyNameResolves() throws Exception {
    ClassLoader here = getClass().getClassLoader();
    for (String name : VerbsClassNames.ALL) {
      // initialize=false: resolving the name must not load libdisni on a host without RDMA.
      assertNotNull(Class.forName(name, false, here), name);
      assertNotNull(here.getResource(VerbsClassNames.resource(name)), name);
    }
  }

  @Test
  void everyNameIsDefinedByTheIsolatedLoader() {
    for (String name : VerbsClassNames.ALL) {
      assertTrue(IsolatedVerbsClassLoader.isolated(name), name);
    }
  }
}
