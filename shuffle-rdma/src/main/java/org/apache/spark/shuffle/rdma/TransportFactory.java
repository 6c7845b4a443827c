/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportProvider;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the transport named by {@code spark.shuffle.rdma.transport}: "tcp", "verbs", or
 * "auto" (verbs when it can start here, else tcp, with one log line that says why).
 *
 * <p>Providers are found with {@link ServiceLoader} (META-INF/services lists the tcp and the
 * verbs provider), so neither this class nor the transport SPI links against a transport:
 * the Spark layer depends on {@code transport}, each transport on {@code transport}, and
 * only this class, beside {@link ExecutorRuntime}, knows there are several.
 */
public final class TransportFactory {
  private static final Logger LOG = LoggerFactory.getLogger(TransportFactory.class);

  private TransportFactory() {}

  public static ShuffleTransport create(TransportSettings settings) throws IOException {
    String choice = settings.conf().transport();
    switch (choice) {
      case "tcp":
        return tcp().create(settings);
      case "verbs": {
        TransportProvider verbs = provider("verbs");
        String why = verbsUnavailable(verbs, settings);
        if (why != null) {
          throw new IOException("spark.shuffle.rdma.transport=verbs, but RDMA verbs cannot "
              + "start on this executor: " + why + " Run 'java -jar shuffle-rdma.jar doctor' "
              + "on this host for a full check, or set spark.shuffle.rdma.transport=tcp.");
        }
        return verbs.create(settings);
      }
      case "auto": {
        TransportProvider verbs = provider("verbs");
        String why = verbsUnavailable(verbs, settings);
        if (why == null) {
          try {
            ShuffleTransport t = verbs.create(settings);
            LOG.info("spark.shuffle.rdma.transport=auto: using verbs ({})", t.localAddress());
            return t;
          } catch (IOException | RuntimeException | LinkageError e) {
            why = "verbs failed to start: " + e;
          }
        }
        ShuffleTransport t = tcp().create(settings);
        LOG.info("spark.shuffle.rdma.transport=auto: using tcp ({}) because {}",
            t.localAddress(), why);
        return t;
      }
      default:
        throw new IllegalArgumentException("unknown transport " + choice);
    }
  }

  /** Why verbs cannot run here, or null: security policy first, then the provider's checks. */
  private static String verbsUnavailable(TransportProvider verbs, TransportSettings settings) {
    String policy = settings.conf().rdmaEncryptionConflict();
    if (policy != null) {
      return policy;
    }
    return verbs == null ? "the verbs transport is not part of this build."
        : verbs.unavailableReason(settings);
  }

  private static TransportProvider tcp() {
    TransportProvider tcp = provider("tcp");
    if (tcp == null) {
      throw new IllegalStateException("the tcp transport provider is missing from "
          + "META-INF/services/" + TransportProvider.class.getName() + " in the plugin jar");
    }
    return tcp;
  }

  /**
   * The provider named {@code name}, or null when none is on the class path or it cannot be
   * loaded here (the verbs provider's classes are always built, but a broken jar should fall
   * back, not fail the executor). Looked up in the loader that defined the plugin, which is
   * the one holding the jar under --jars too.
   */
  public static TransportProvider provider(String name) {
    try {
      for (TransportProvider p : ServiceLoader.load(TransportProvider.class,
          TransportFactory.class.getClassLoader())) {
        if (p.name().equals(name)) {
          return p;
        }
      }
    } catch (ServiceConfigurationError | LinkageError e) {
      LOG.warn("transport provider {} present but not loadable", name, e);
    }
    return null;
  }
}
