/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;

import org.apache.spark.SparkConf;
import org.apache.spark.internal.config.ConfigEntry;
import scala.Tuple2;

/**
 * A validated, typed snapshot of the {@code spark.shuffle.rdma.*} keys. Constructing it reads
 * every key defined in {@link RdmaConf} (the only place a key's name, type, default and doc
 * are stated; a getter here is a typed name for {@link #get}, nothing more), so a bad value
 * fails at startup with Spark's message that names the key and the accepted range, and a key under the prefix that no entry defines
 * (a typo) fails too instead of being silently ignored.
 */
public final class RdmaShuffleConf {
  private final SparkConf sparkConf;
  /** Every key's validated value, by key, read once at construction. */
  private final Map<String, Object> values = new HashMap<>();

  public RdmaShuffleConf(SparkConf conf) {
    this.sparkConf = conf;
    rejectUnknownKeys(conf);
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      ConfigEntry<?> entry = it.next();
      values.put(entry.key(), read(conf, entry));
    }
  }

  /** The value of one key, typed by its entry (the getters below are thin names for it). */
  @SuppressWarnings("unchecked")
  public <T> T get(ConfigEntry<T> entry) {
    Object v = values.get(entry.key());
    if (v == null && !values.containsKey(entry.key())) {
      throw new IllegalArgumentException(entry.key() + " is not in RdmaConf.ALL");
    }
    return (T) v;
  }

  private static Object read(SparkConf conf, ConfigEntry<?> entry) {
    try {
      return conf.get(entry);
    } catch (IllegalArgumentException e) {
      // Spark's message already names the key and the constraint; add what to do.
      throw new IllegalArgumentException("Invalid shuffle configuration: " + e.getMessage()
          + " Fix or remove " + entry.key() + " (default: " + entry.defaultValueString()
          + "); docs/configuration.md lists every key.", e);
    }
  }

  private static void rejectUnknownKeys(SparkConf conf) {
    List<String> known = new ArrayList<>();
    scala.collection.Iterator<ConfigEntry<?>> it = RdmaConf.ALL().iterator();
    while (it.hasNext()) {
      known.add(it.next().key());
    }
    for (Tuple2<String, String> kv : conf.getAll()) {
      String key = kv._1();
      if (key.startsWith(RdmaConf.PREFIX()) && !known.contains(key)) {
        throw new IllegalArgumentException("Unknown shuffle configuration key " + key
            + closest(key, known) + ". Known keys: " + String.join(", ", known)
            + " (docs/configuration.md).");
      }
    }
  }

  private static String closest(String key, List<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = editDistance(key.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        bestDistance = d;
        best = k;
      }
    }
    return best != null && bestDistance <= 4 ? " (did you mean " + best + "?)" : "";
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  public SparkConf sparkConf() {
    return sparkConf;
  }

  /** "auto", "verbs" or "tcp". */
  public String transport() {
    return get(RdmaConf.TRANSPORT());
  }

  /** Empty when the transport should choose. */
  public String bindAddress() {
    return get(RdmaConf.BIND_ADDRESS());
  }

  public int port() {
    return (Integer) get(RdmaConf.PORT());
  }

  /** Empty, "dev" or "dev:port". */
  public String device() {
    return get(RdmaConf.DEVICE());
  }

  public long regionSize() {
    return (Long) get(RdmaConf.REGION_SIZE());
  }

  public int maxReadsInFlightPerPeer() {
    return (Integer) get(RdmaConf.MAX_READS_IN_FLIGHT_PER_PEER());
  }

  /** Longest single read; larger blocks are read in pieces. */
  public long maxReadSize() {
    return (Long) get(RdmaConf.MAX_READ_SIZE());
  }

  /** Bytes of map-output indexes a reducer executor keeps cached (0: none). */
  public long indexCacheSize() {
    return (Long) get(RdmaConf.INDEX_CACHE_SIZE());
  }

  /** Whether reducers check each block against the writer's per-partition checksum. */
  public boolean verifyChecksums() {
    return (Boolean) get(RdmaConf.VERIFY_CHECKSUMS());
  }

  public long readTimeoutMs() {
    return (Long) get(RdmaConf.READ_TIMEOUT());
  }

  public boolean allowUnencryptedRdma() {
    return (Boolean) get(RdmaConf.ALLOW_UNENCRYPTED_RDMA());
  }

  /**
   * Null when RDMA may carry this application's shuffle bytes; otherwise why not. With
   * network encryption asked for, plaintext on the wire is allowed only if the shuffle files
   * are themselves encrypted (spark.io.encryption.enabled) or the operator said the fabric
   * is isolated.
   */
  public String rdmaEncryptionConflict() {
    boolean networkCrypto = sparkConf.getBoolean("spark.authenticate", false)
        && sparkConf.getBoolean("spark.network.crypto.enabled", false);
    boolean filesEncrypted = sparkConf.getBoolean("spark.io.encryption.enabled", false);
    if (networkCrypto && !filesEncrypted && !allowUnencryptedRdma()) {
      return "spark.network.crypto.enabled=true asks for encrypted traffic, but RDMA READ "
          + "moves shuffle bytes unencrypted; enable spark.io.encryption.enabled (shuffle files "
          + "become ciphertext), use spark.shuffle.rdma.transport=tcp (encrypted), or set "
          + "spark.shuffle.rdma.allowUnencryptedRdma=true if the RDMA fabric is isolated.";
    }
    return null;
  }

  public long connectTimeoutMs() {
    return (Long) get(RdmaConf.CONNECT_TIMEOUT());
  }

  /** Completion-queue polling threads of the verbs transport. */
  public int verbsCompletionThreads() {
    return (Integer) get(RdmaConf.VERBS_COMPLETION_THREADS());
  }

  /** Bytes registered once for RDMA READ destinations on the verbs transport. */
  public long verbsReceivePoolSize() {
    return (Long) get(RdmaConf.VERBS_RECEIVE_POOL_SIZE());
  }

  /** Cap on the bytes of map outputs registered for remote READ per executor; 0: none. */
  public long maxRegisteredBytes() {
    return (Long) get(RdmaConf.MAX_REGISTERED_BYTES());
  }

  /** The node service's Unix socket; empty when there is none (docs/node-service.md). */
  public String serviceSocket() {
    return get(RdmaConf.SERVICE_SOCKET());
  }

  /** Node service: how long an application's outputs outlive its unreachable driver. */
  public long serviceDriverTimeoutMs() {
    return (Long) get(RdmaConf.SERVICE_DRIVER_TIMEOUT());
  }

  /** Node service: how long a driver that answered before may refuse connections. */
  public long serviceDriverGoneTimeoutMs() {
    return (Long) get(RdmaConf.SERVICE_DRIVER_GONE_TIMEOUT());
  }

  /** Node service: how often each application's driver is checked. */
  public long serviceDriverProbeIntervalMs() {
    return (Long) get(RdmaConf.SERVICE_DRIVER_PROBE_INTERVAL());
  }

  /**
   * Whether executors hand their committed map outputs to the node service. With
   * spark.authenticate too: the executors give the service the application's secret and its
   * readers authenticate there with it (docs/node-service.md, authentication).
   */
  public boolean handsOverToService() {
    return !serviceSocket().isEmpty();
  }

  /** How long a verbs read waits for receive-pool memory before it lands outside the pool. */
  public long verbsPoolWaitMs() {
    return (Long) get(RdmaConf.VERBS_POOL_WAIT());
  }

  /** How often inbound verbs connections are probed, in milliseconds; 0: no probes. */
  public long verbsKeepaliveIntervalMs() {
    return (Long) get(RdmaConf.VERBS_KEEPALIVE_INTERVAL());
  }

  /** RC queue pairs per peer on verbs; 0: from the device (see QueuePairStriping). */
  public int verbsQueuePairsPerPeer() {
    return (Integer) get(RdmaConf.VERBS_QUEUE_PAIRS_PER_PEER());
  }

  public int verbsMaxInboundQueuePairs() {
    return (Integer) get(RdmaConf.VERBS_MAX_INBOUND_QUEUE_PAIRS());
  }

  public int verbsMaxInboundQueuePairsPerAddress() {
    return (Integer) get(RdmaConf.VERBS_MAX_INBOUND_QUEUE_PAIRS_PER_ADDRESS());
  }

  /** The ToS byte of verbs connections; empty: the device default (rdma_cm's). */
  public OptionalInt verbsTrafficClass() {
    scala.Option<?> v = get(RdmaConf.VERBS_TRAFFIC_CLASS());
    return v.isDefined() ? OptionalInt.of((Integer) v.get()) : OptionalInt.empty();
  }

  /** auto, shared, sharedWritable or private (see MapModeChoice). */
  public String verbsMapMode() {
    return get(RdmaConf.VERBS_MAP_MODE());
  }

  public int tcpMaxConnectionsPerAddress() {
    return (Integer) get(RdmaConf.TCP_MAX_CONNECTIONS_PER_ADDRESS());
  }

  public int tcpMaxConnections() {
    return (Integer) get(RdmaConf.TCP_MAX_CONNECTIONS());
  }

  public long tcpHandshakeTimeoutMs() {
    return (Long) get(RdmaConf.TCP_HANDSHAKE_TIMEOUT());
  }

  public long tcpMaxRequestFrameSize() {
    return (Long) get(RdmaConf.TCP_MAX_REQUEST_FRAME_SIZE());
  }

  /** Reads at least this long are sent with sendfile on tcp; 0: never. */
  public long tcpSendfileThreshold() {
    return (Long) get(RdmaConf.TCP_SENDFILE_THRESHOLD());
  }

  /** auto, true or false (see OdpChoice). */
  public String verbsOdp() {
    return get(RdmaConf.VERBS_ODP());
  }
}
