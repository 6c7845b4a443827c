/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.service;

import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The node service's command line:
 * {@code --socket PATH [--transport tcp|verbs|auto] [--host H] [--port N] [--allow-uid U]...
 * [--max-connections N] [--max-registered-bytes SIZE] [--app-share PERCENT]
 * [--state-dir PATH|none] [--conf spark.shuffle.rdma.KEY=VALUE]...}. A bad argument is an
 * {@link IllegalArgumentException} naming it and the fix.
 */
final class ServiceArgs {
  static final String USAGE = "usage: shuffle-rdma-service --socket PATH "
      + "[--transport tcp|verbs|auto] [--host ADDRESS] [--port N] [--allow-uid UID]... "
      + "[--max-connections N] [--max-registered-bytes SIZE] [--app-share PERCENT] "
      + "[--state-dir PATH|none] [--conf spark.shuffle.rdma.KEY=VALUE]...";
  /** --state-dir's value that keeps no state. */
  static final String NO_STATE = "none";

  Path socket;
  String transport = "auto";
  String host;
  int port;
  int maxConnections = 256;
  /** The node's cap on registered bytes across applications; 0: none. */
  long maxRegisteredBytes;
  /** What one application may hold, in percent of maxRegisteredBytes. */
  int appSharePercent = 100;
  /** --state-dir; null: next to the socket ({@link #stateDir}). */
  String stateDir;
  final Set<Integer> allowUids = new TreeSet<>();
  final Map<String, String> conf = new LinkedHashMap<>();
  boolean help;

  static ServiceArgs parse(String[] args) {
    ServiceArgs a = new ServiceArgs();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("-h") || arg.equals("--help")) {
        a.help = true;
        return a;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(arg + " needs a value; " + USAGE);
      }
      String v = args[++i];
      switch (arg) {
        case "--socket":
          a.socket = Paths.get(v).toAbsolutePath();
          break;
        case "--transport":
          if (!v.equals("tcp") && !v.equals("verbs") && !v.equals("auto")) {
            throw new IllegalArgumentException("--transport is tcp, verbs or auto, not '" + v
                + "'");
          }
          a.transport = v;
          break;
        case "--host":
          a.host = v;
          break;
        case "--port":
          a.port = number(arg, v, 0, 65535);
          break;
        case "--allow-uid":
          a.allowUids.add(number(arg, v, 0, Integer.MAX_VALUE));
          break;
        case "--max-connections":
          a.maxConnections = number(arg, v, 1, 65536);
          break;
        case "--max-registered-bytes":
          try {
            a.maxRegisteredBytes = org.apache.spark.network.util.JavaUtils.byteStringAsBytes(v);
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--max-registered-bytes takes a size (0, 512m, "
                + "64g), not '" + v + "'");
          }
          if (a.maxRegisteredBytes < 0) {
            throw new IllegalArgumentException("--max-registered-bytes must not be negative");
          }
          break;
        case "--state-dir":
          if (v.isEmpty()) {
            throw new IllegalArgumentException("--state-dir takes a directory, or none");
          }
          a.stateDir = v;
          break;
        case "--app-share":
          a.appSharePercent = number(arg, v, 1, 100);
          break;
        case "--conf": {
          int eq = v.indexOf('=');
          if (eq <= 0 || !v.startsWith("spark.shuffle.rdma.")) {
            throw new IllegalArgumentException("--conf takes spark.shuffle.rdma.KEY=VALUE, "
                + "not '" + v + "'");
          }
          a.conf.put(v.substring(0, eq), v.substring(eq + 1));
          break;
        }
        default:
          throw new IllegalArgumentException("unknown argument " + arg + "; " + USAGE);
      }
    }
    if (a.socket == null) {
      throw new IllegalArgumentException("--socket PATH is required; " + USAGE);
    }
    if (a.appSharePercent < 100 && a.maxRegisteredBytes == 0) {
      throw new IllegalArgumentException("--app-share is a share of --max-registered-bytes: "
          + "set a cap with --max-registered-bytes SIZE");
    }
    return a;
  }

  /**
   * The address the transport listens on and readers reach: --host, else this host's as
   * Spark picks its own ({@link LocalAddress}, which logs its choice).
   */
  String hostOrDefault(Consumer<String> log) throws UnknownHostException, SocketException {
    return host != null ? host : LocalAddress.find(log);
  }

  /**
   * Where outputs are kept across restarts: --state-dir, else {@code <socket>.state} beside
   * the socket (a service started again with the same command line finds it); null with
   * --state-dir none.
   */
  Path stateDir() {
    if (NO_STATE.equals(stateDir)) {
      return null;
    }
    return stateDir != null ? Paths.get(stateDir).toAbsolutePath()
        : socket.resolveSibling(socket.getFileName() + ".state");
  }

  private static int number(String arg, String v, int min, int max) {
    try {
      int n = Integer.parseInt(v);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException(arg + " takes a number in [" + min + ", " + max
        + "], not '" + v + "'");
  }
}
