/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Aggregates jdk.ExecutionSample events of executor JFR recordings (the same events
 * {@code jfr print --events jdk.ExecutionSample} prints): where CPU samples land, by the
 * category of the top frame, by thread, inclusively for the plugin and transport, and the
 * hottest top frames. Also usable by hand: {@code java -cp ... JfrSummary a.jfr b.jfr}.
 */
public final class JfrSummary {
  private JfrSummary() {}

  public static void main(String[] args) throws IOException {
    List<Path> files = new ArrayList<>();
    for (String a : args) files.add(Paths.get(a));
    System.out.println(summarize(files));
  }

  /** Category of a class name, first match wins. */
  static String category(String cls) {
    String[][] rules = {
        {"org.apache.spark.shuffle.rdma.transport", "plugin: transport"},
        {"org.apache.spark.shuffle.rdma.bench", "benchmark job (record generation, digests)"},
        {"org.apache.spark.shuffle.rdma", "plugin: reader, registry, metadata"},
        {"java.util.SplittableRandom", "benchmark job (record generation, digests)"},
        {"io.netty", "network: netty"},
        {"org.apache.spark.network", "network: Spark network-common"},
        {"sun.nio", "network/IO: JDK NIO"},
        {"java.nio", "network/IO: JDK NIO"},
        {"com.esotericsoftware", "serialization: Kryo"},
        {"com.twitter.chill", "serialization: Kryo"},
        {"org.apache.spark.serializer", "serialization: Spark serializer"},
        {"java.io.ObjectInputStream", "serialization: Java"},
        {"java.io.ObjectOutputStream", "serialization: Java"},
        {"net.jpountz", "compression: lz4"},
        {"org.apache.spark.io", "compression: Spark codec streams"},
        {"com.github.luben", "compression: zstd"},
        {"org.apache.spark.util.collection", "sort/aggregate: Spark collections"},
        {"org.apache.spark.shuffle", "Spark shuffle (writer, reader, fetcher)"},
        {"org.apache.spark.storage", "Spark storage (fetcher, disk writer)"},
        {"org.apache.spark.sql", "Spark SQL operators"},
        {"org.apache.parquet", "Parquet"},
        {"org.apache.spark.util", "Spark util"},
        {"org.apache.spark", "Spark other"},
        {"scala.", "Scala library (iterators, collections)"},
        {"java.util", "JDK collections/util"},
        {"java.lang", "JDK lang (arrays, strings, boxing)"},
        {"jdk.internal", "JDK internal"},
    };
    for (String[] r : rules) if (cls.startsWith(r[0])) return r[1];
    return "other";
  }

  public static String summarize(List<Path> files) throws IOException {
    Map<String, Long> byCat = new LinkedHashMap<>();
    Map<String, Long> byFrame = new LinkedHashMap<>();
    Map<String, Long> byThread = new LinkedHashMap<>();
    long total = 0, inclPlugin = 0, inclTransport = 0, inclNetwork = 0, inclFetcher = 0;
    for (Path f : files) {
      for (RecordedEvent e : RecordingFile.readAllEvents(f)) {
        if (!e.getEventType().getName().equals("jdk.ExecutionSample")) continue;
        RecordedStackTrace st = e.getStackTrace();
        if (st == null || st.getFrames().isEmpty()) continue;
        total++;
        List<RecordedFrame> frames = st.getFrames();
        RecordedFrame top = frames.get(0);
        String cls = top.getMethod().getType().getName();
        byCat.merge(category(cls), 1L, Long::sum);
        byFrame.merge(cls + "." + top.getMethod().getName(), 1L, Long::sum);
        RecordedThread t = e.getThread("sampledThread");
        String tn = t == null || t.getJavaName() == null ? "?" : t.getJavaName()
            .replaceAll("[0-9]+", "N");
        byThread.merge(tn, 1L, Long::sum);
        boolean p = false, tr = false, nw = false, fe = false;
        for (RecordedFrame fr : frames) {
          String c = fr.getMethod().getType().getName();
          if (c.startsWith("org.apache.spark.shuffle.rdma.transport")) tr = true;
          // The read path: reader, transport, metadata plane. (The writer package wraps
          // Spark's sort writer, so it is on every map task's stack: not counted here.)
          if (c.startsWith("org.apache.spark.shuffle.rdma.reader")
              || c.startsWith("org.apache.spark.shuffle.rdma.transport")
              || c.startsWith("org.apache.spark.shuffle.rdma.metadata")) {
            p = true;
          }
          if (c.startsWith("org.apache.spark.network") || c.startsWith("io.netty")) nw = true;
          if (c.startsWith("org.apache.spark.storage.ShuffleBlockFetcherIterator")) fe = true;
        }
        if (p) inclPlugin++;
        if (tr) inclTransport++;
        if (nw) inclNetwork++;
        if (fe) inclFetcher++;
      }
    }
    StringBuilder b = new StringBuilder();
    b.append(String.format("%d execution samples from %d recordings%n%n", total, files.size()));
    b.append("Java frames only (kernel time in socket calls is not sampled). Inclusive (a "
        + "frame anywhere on the stack):\n\n");
    b.append("| stack contains | share of samples |\n|---|---:|\n");
    b.append(row("plugin read path (rdma.reader, .transport, .metadata)", inclPlugin, total));
    b.append(row("plugin transport (...rdma.transport.*)", inclTransport, total));
    b.append(row("netty / Spark network-common", inclNetwork, total));
    b.append(row("ShuffleBlockFetcherIterator", inclFetcher, total));
    b.append("\nBy category of the top frame (self time):\n\n");
    b.append("| category | share |\n|---|---:|\n");
    sorted(byCat).forEach(e -> b.append(row(e.getKey(), e.getValue(), finalTotal(byCat))));
    b.append("\nBy thread (digits as N):\n\n| thread | share |\n|---|---:|\n");
    sorted(byThread).stream().limit(10)
        .forEach(e -> b.append(row(e.getKey(), e.getValue(), finalTotal(byThread))));
    b.append("\nTop 25 frames (self):\n\n| frame | share |\n|---|---:|\n");
    sorted(byFrame).stream().limit(25)
        .forEach(e -> b.append(row("`" + e.getKey() + "`", e.getValue(), finalTotal(byFrame))));
    return b.toString();
  }

  private static long finalTotal(Map<String, Long> m) {
    long t = 0;
    for (long v : m.values()) t += v;
    return t;
  }

  private static List<Map.Entry<String, Long>> sorted(Map<String, Long> m) {
    List<Map.Entry<String, Long>> l = new ArrayList<>(m.entrySet());
    l.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
    return l;
  }

  private static String row(String k, long n, long total) {
    return String.format("| %s | %.1f%% |%n", k, 100.0 * n / Math.max(1, total));
  }
}
