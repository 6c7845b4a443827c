/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The single definition of every metric the plugin exports: name (as in the stats maps of
 * TransportStats, ReaderStats and ExecutorRuntime), kind, unit and meaning. RdmaMetricsSource
 * registers each by its kind, MetricsDocGenerator renders docs/metrics.md from it, and
 * MetricsCatalogTest fails when a stats map holds a name this list does not (or the reverse).
 */
public final class RdmaMetrics {
  private RdmaMetrics() {}

  /** How a metric behaves, which decides how Spark's sinks show it. */
  public enum Kind {
    /** Only grows while the executor lives: a Spark (Dropwizard) counter; summed on the
     * driver over every executor, a removed one as last seen, so the sum only grows. */
    COUNTER("counter", "counters", "Count"),
    /** A current value (may fall): a gauge; summed on the driver over the live executors. */
    GAUGE("gauge", "gauges", "Value"),
    /** A per-executor setting or negotiated value: a gauge on executors, not on the driver
     * (a sum over executors means nothing). */
    SETTING("setting", "gauges", "Value");

    final String label;
    /** Spark's PrometheusServlet type label and the JmxSink's "type" key. */
    public final String sparkType;
    /** PrometheusServlet's name suffix and the JMX attribute holding the value. */
    public final String valueName;

    Kind(String label, String sparkType, String valueName) {
      this.label = label;
      this.sparkType = sparkType;
      this.valueName = valueName;
    }
  }

  /** One exported metric. */
  public static final class Metric {
    public final String name;
    public final Kind kind;
    public final String unit;
    public final String doc;
    /** Exported by the driver's cluster source only ("executors"). */
    public final boolean clusterOnly;

    Metric(String name, Kind kind, String unit, String doc, boolean clusterOnly) {
      this.name = name;
      this.kind = kind;
      this.unit = unit;
      this.doc = doc;
      this.clusterOnly = clusterOnly;
    }

    /** Whether the driver's rdmaShuffleCluster source exports it. */
    public boolean onCluster() {
      return kind != Kind.SETTING;
    }
  }

  /** Registry keys the executor runtime fills (the transport and reader fill their own). */
  static final String REGISTRY_OUTPUTS = "registry.outputs";
  static final String REGISTRY_REGISTRATIONS = "registry.registrations";
  static final String REGISTRY_BYTES = "registry.bytes";
  static final String REGISTRY_OVER_CAP = "registry.outputsOverCap";
  static final String REGISTRY_FAILURES = "registry.registrationFailures";
  static final String REGISTRY_HANDED_OVER = "registry.handedOver";
  static final String REGISTRY_NOT_HANDED_OVER = "registry.notHandedOver";
  static final String METADATA_TABLE_FETCHES = "metadata.tableFetches";
  static final String EXECUTORS = "executors";

  public static final List<Metric> ALL = Collections.unmodifiableList(Arrays.asList(
      gauge("transport.verbs", "0/1",
          "1 when this executor's transport is verbs (RDMA READ), 0 on tcp; summed on the "
          + "driver: executors on verbs"),
      counter("transport.readsPosted", "count",
          "one-sided reads this executor issued: the index and data reads the reader counts in "
          + "`reader.indexReads` and `reader.dataReads`"),
      counter("transport.readsCompleted", "count",
          "reads of `transport.readsPosted` that completed"),
      counter("transport.readsFailed", "count",
          "reads of `transport.readsPosted` that failed (timeout, revoked key, peer gone): each fails a fetch"),
      counter("transport.bytesRead", "bytes",
          "bytes the completed reads brought in"),
      counter("transport.batchesPosted", "count",
          "groups of reads posted together: on tcp one flush, which carries one or more "
          + "request batches of up to 64 reads each"),
      counter("transport.readsServed", "count",
          "reads other executors made of this one's memory that its CPU served (tcp; 0 on "
          + "verbs, where the HCA serves them)"),
      counter("transport.bytesServed", "bytes",
          "bytes of `transport.readsServed`"),
      counter("transport.readsRefused", "count",
          "reads this executor refused to serve (for example an unknown or revoked key; "
          + "on tcp a batch refused whole, or from a connection not authenticated for the "
          + "application, counts once)"),
      gauge("transport.regionsRegistered", "count",
          "memory regions registered now"),
      gauge("transport.bytesRegistered", "bytes",
          "bytes registered now (on verbs: pinned)"),
      counter("transport.connectionsOpened", "count",
          "connections this executor opened to peers"),
      counter("transport.connectionsRejected", "count",
          "verbs: connection requests this executor rejected (with `spark.authenticate`: "
          + "no valid MAC of the application secret, stale, replayed, or over the sender's "
          + "share of the replay cache; always: over `verbs.maxInboundQueuePairs` or "
          + "`verbs.maxInboundQueuePairsPerAddress`), and connections it refused because "
          + "the server gave no valid proof"),
      counter("transport.reconnects", "count",
          "connections replaced because one read's error broke them (verbs: the RC queue "
          + "pair goes to the error state and every read on it fails); the reads flushed or "
          + "waiting at the break are posted again on the new one"),
      counter("transport.readsRetried", "count",
          "reads posted again on a replacement connection (see `transport.reconnects`) "
          + "instead of failing their fetch"),
      gauge("transport.pinnedCopiedBytes", "bytes",
          "verbs with `spark.shuffle.rdma.verbs.mapMode` private (or auto falling back to "
          + "it): registered bytes whose pages the kernel pinned as private copies, held in "
          + "executor memory besides the page cache; 0 when the page cache itself is "
          + "registered"),
      setting("transport.readDepth", "count",
          "verbs: the RDMA READ depth negotiated on the latest connection this executor "
          + "opened (READs one queue pair keeps outstanding at most); 0 before any "
          + "connection and on tcp"),
      setting("transport.queuePairsPerPeer", "count",
          "verbs: queue pairs this executor opens to each peer "
          + "(`spark.shuffle.rdma.verbs.queuePairsPerPeer`, or from the device when 0); 0 "
          + "on tcp"),
      counter("transport.poolOverflows", "count",
          "verbs: reads that found no receive-pool memory within "
          + "`spark.shuffle.rdma.verbs.poolWait` (the pool held by fetched blocks tasks "
          + "have not consumed yet) and landed in memory registered for that read alone; "
          + "rising means the pool is too small for the fetch iterators open at once "
          + "(logged at the 1st, 2nd, 4th ... occurrence)"),
      counter("transport.poolOverflowBytes", "bytes",
          "bytes of `transport.poolOverflows` reads"),
      gauge("transport.inboundQueuePairs", "count",
          "verbs: queue pairs peers hold open to read from this executor"),
      counter("transport.keepaliveFailures", "count",
          "verbs: inbound connections torn down because their keepalive probe failed (the "
          + "reader vanished without a disconnect: power loss, a partitioned host; "
          + "`spark.shuffle.rdma.verbs.keepaliveInterval`)"),
      counter("reader.fetchCalls", "count",
          "fetch calls Spark's fetcher made to the plugin's block store client"),
      counter("reader.remoteBlocks", "count",
          "remote blocks fetched through the transport"),
      counter("reader.remoteBytes", "bytes",
          "bytes of `reader.remoteBlocks`"),
      counter("reader.indexReads", "count",
          "map-output index reads (the whole index of an output, once per executor while "
          + "its index cache holds it; with `spark.shuffle.rdma.verifyChecksums`, the read "
          + "of the output's checksums in the same round counts here too)"),
      counter("reader.dataReads", "count",
          "data reads (one per block, fewer when adjacent blocks share one, more for "
          + "blocks over one read)"),
      counter("reader.coalescedBlocks", "count",
          "blocks delivered as a slice of one read shared with adjacent blocks of the "
          + "same map output"),
      counter("reader.fetches", "count",
          "fetches that read through the transport"),
      counter("reader.roundTrips", "count",
          "their dependent rounds: 1 when a fetch waited for index loads, plus 1 per "
          + "batch of data reads posted at once"),
      counter("reader.cachedFetches", "count",
          "fetches whose every index was cached when they started"),
      counter("reader.cachedFetchRoundTrips", "count",
          "round trips of those (at most one each by design: none when every block failed "
          + "or was empty)"),
      gauge("reader.indexCacheBytes", "bytes",
          "bytes the index cache holds (bounded by `spark.shuffle.rdma.indexCacheSize`)"),
      counter("reader.indexCacheEvictions", "count",
          "indexes dropped from the cache to stay within its bound"),
      counter("reader.failedBlocks", "count",
          "blocks whose failure reached Spark after any retries (each one a fetch failure "
          + "there)"),
      counter("reader.blockReadFailures", "count",
          "block reads that failed in one attempt (a lost connection, a timeout, a "
          + "refusal); a block retried and then read counts here but not in "
          + "`reader.failedBlocks`"),
      counter("reader.fetchRetries", "count",
          "fetch attempts started again after a curable failure "
          + "(`spark.shuffle.io.maxRetries`, `spark.shuffle.io.retryWait`: a reset or lost "
          + "connection, a transport retry error, a timeout; never a refusal, a refused "
          + "reconnect, a checksum mismatch or a removed executor, unless the node service "
          + "serves all of the fetch's blocks); rising means the fabric "
          + "drops connections (check its lossless class, docs/rdma-setup.md)"),
      counter("reader.blocksToDisk", "count",
          "blocks fetched to disk (above Spark's `maxRemoteBlockSizeFetchToMem`)"),
      counter("reader.fallbackBlocks", "count",
          "blocks with no registration where Spark expects them (migrated by "
          + "decommissioning, or of an executor Spark removed while an external shuffle "
          + "service serves its outputs), fetched by Spark's own client instead"),
      counter("reader.removedExecutorBlocks", "count",
          "of `reader.fallbackBlocks`: blocks whose one-sided read failed because Spark "
          + "had removed their executor after this reader fetched the executor directory; "
          + "the reader asked the driver, found the executor gone and fetched them through "
          + "Spark's client instead of failing"),
      counter("reader.checksumVerifiedBlocks", "count",
          "with `spark.shuffle.rdma.verifyChecksums`: blocks whose every partition "
          + "matched the checksum the writer stored"),
      counter("reader.checksumVerifiedBytes", "bytes",
          "bytes of `reader.checksumVerifiedBlocks`"),
      counter("reader.checksumMismatches", "count",
          "blocks failed because a partition's bytes differ from the writer's checksum (a "
          + "fetch failure naming the block; Spark recomputes the output)"),
      counter("reader.checksumSkippedBlocks", "count",
          "with verification on: blocks read unverified because their map output has no "
          + "checksums (`spark.shuffle.checksum.enabled=false` on the writer, or an unknown "
          + "algorithm)"),
      counter("reader.checksumNanos", "nanoseconds",
          "time spent computing checksums of blocks held in memory (CPU on the "
          + "transport's callback threads; blocks streamed to disk are verified as they are "
          + "written and not timed)"),
      gauge(REGISTRY_OUTPUTS, "count",
          "map outputs this executor serves now"),
      counter(REGISTRY_REGISTRATIONS, "count",
          "map outputs registered since the executor started (cleanup does not lower it)"),
      gauge(REGISTRY_BYTES, "bytes",
          "bytes of the outputs in `registry.outputs` (what a leak check watches go back to 0)"),
      counter(REGISTRY_OVER_CAP, "count",
          "committed map outputs left unregistered because registering them would pass "
          + "`spark.shuffle.rdma.maxRegisteredBytes`; readers fetch their blocks through "
          + "Spark's block transfer service (`reader.fallbackBlocks`)"),
      counter(REGISTRY_FAILURES, "count",
          "committed map outputs whose registration failed (for example `ENOMEM` at the "
          + "memlock limit); served the same way, the task does not fail"),
      counter(REGISTRY_HANDED_OVER, "count",
          "with `spark.shuffle.rdma.service.socket`: committed map outputs handed to the "
          + "node service of this host, which serves them (also after this executor is "
          + "gone); not in `registry.outputs`"),
      counter(REGISTRY_NOT_HANDED_OVER, "count",
          "with `spark.shuffle.rdma.service.socket`: committed map outputs the node service "
          + "refused or could not take (not running, unreachable); registered by this "
          + "executor as without a service, so they go with it: once Spark removed the "
          + "executor their reads fail and Spark recomputes them (the first is logged with "
          + "its reason)"),
      counter(METADATA_TABLE_FETCHES, "count",
          "shuffle tables fetched from the driver"),
      cluster(EXECUTORS, "count",
          "live executors that reported (driver only)")
));

  private static final Map<String, Metric> BY_NAME = new LinkedHashMap<>();

  static {
    for (Metric m : ALL) {
      if (BY_NAME.put(m.name, m) != null) {
        throw new IllegalStateException("metric defined twice: " + m.name);
      }
    }
  }

  /** The definition of a stats key, or null when it has none (a test keeps that from happening). */
  public static Metric byName(String name) {
    return BY_NAME.get(name);
  }

  /**
   * The name Spark's PrometheusServlet gives a metric: "metrics_" then the registry name
   * (namespace.instance.source.metric) with every character outside [a-zA-Z0-9] turned to '_',
   * then "_Count" (counters) or "_Value" (gauges), labelled {type="counters"|"gauges"}.
   */
  public static String prometheusName(String namespace, String instance, String source,
      Metric m) {
    return ("metrics_" + namespace + "." + instance + "." + source + "." + m.name)
        .replaceAll("[^a-zA-Z0-9]", "_") + "_" + m.kind.valueName;
  }

  private static Metric counter(String name, String unit, String doc) {
    return new Metric(name, Kind.COUNTER, unit, doc, false);
  }

  private static Metric gauge(String name, String unit, String doc) {
    return new Metric(name, Kind.GAUGE, unit, doc, false);
  }

  private static Metric setting(String name, String unit, String doc) {
    return new Metric(name, Kind.SETTING, unit, doc, false);
  }

  private static Metric cluster(String name, String unit, String doc) {
    return new Metric(name, Kind.GAUGE, unit, doc, true);
  }
}
