/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;

import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.ShuffleTransport;
import org.apache.spark.shuffle.rdma.transport.TransportProvider;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsClassNames;
import org.apache.spark.shuffle.rdma.transport.verbs.loader.VerbsRuntime;
import org.apache.spark.shuffle.rdma.transport.verbs.sysfs.PortSelector;

/**
 * The verbs transport's entry point, found by TransportFactory through ServiceLoader. It
 * never links against DiSNI itself: the checks run on sysfs and /proc, and the transport is created
 * through {@link VerbsRuntime}'s isolated class loader, which also loads libdisni.
 */
public final class VerbsTransportProvider implements TransportProvider {
  private final VerbsPreflight preflight;

  public VerbsTransportProvider() {
    this(VerbsPreflight.forHost());
  }

  VerbsTransportProvider(VerbsPreflight preflight) {
    this.preflight = preflight;
  }

  @Override
  public String name() {
    return "verbs";
  }

  @Override
  public String unavailableReason(TransportSettings settings) {
    RdmaShuffleConf conf = settings.conf();
    PortSelector.Choice port = preflight.port(conf.device(), conf.bindAddress());
    if (!port.ok()) {
      return port.problem();
    }
    String problem = preflight.rdmaCmProblem();
    if (problem != null) {
      return problem;
    }
    problem = preflight.memlockProblem(BuddyAllocator.arenaSizeFor(conf.verbsReceivePoolSize())
        + conf.regionSize());
    if (problem != null) {
      return problem;
    }
    VerbsRuntime runtime = VerbsRuntime.get();
    if (!runtime.loaded()) {
      return runtime.failure();
    }
    return null;
  }

  @Override
  public ShuffleTransport create(TransportSettings settings) throws IOException {
    String why = unavailableReason(settings);
    if (why != null) {
      throw new IOException(why);
    }
    PortSelector.Choice port = preflight.port(settings.conf().device(),
        settings.conf().bindAddress());
    try {
      Class<?> impl = Class.forName(VerbsClassNames.TRANSPORT, true, VerbsRuntime.get().loader());
      return (ShuffleTransport) impl
          .getConstructor(TransportSettings.class, String.class, String.class)
          .newInstance(settings, port.bindAddress(), port.port().id());
    } catch (InvocationTargetException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException) {
        throw (IOException) c;
      }
      throw new IOException("verbs transport failed to start: " + c, c);
    } catch (ReflectiveOperationException e) {
      throw new IOException("verbs transport implementation missing from the jar: " + e, e);
    }
  }
}
