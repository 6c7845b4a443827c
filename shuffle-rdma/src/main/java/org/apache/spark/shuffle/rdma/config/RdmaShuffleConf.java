package org.apache.spark.shuffle.rdma.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.spark.SparkConf;
import org.apache.spark.internal.config.ConfigEntry;
import scala.Tuple2;

/**
 * A validated, typed snapshot of the {@code spark.shuffle.rdma.*} keys. Constructing it reads
 * every key defined in {@link RdmaConf}, so a bad value fails at startup with Spark's message
 * that names the key and the accepted range, and a key under the prefix that no entry defines
 * (a typo) fails too instead of being silently ignored.
 */
public final class RdmaShuffleConf {
  private final SparkConf sparkConf;
  private final String transport;
  private final String bindAddress;
  private final int port;
  private final String device;
  private final long regionSize;
  private final int maxReadsInFlightPerPeer;
  private final long maxReadSize;
  private final long indexCacheSize;
  private final long readTimeoutMs;
  private final boolean allowUnencryptedRdma;
  private final long connectTimeoutMs;
  private final int verbsCompletionThreads;
  private final long verbsReceivePoolSize;
  private final String verbsMapMode;
  private final int tcpMaxConnectionsPerAddress;
  private final long tcpMaxRequestFrameSize;
  private final String verbsOdp;

  public RdmaShuffleConf(SparkConf conf) {
    this.sparkConf = conf;
    rejectUnknownKeys(conf);
    this.transport = get(conf, RdmaConf.TRANSPORT());
    this.bindAddress = get(conf, RdmaConf.BIND_ADDRESS());
    this.port = (Integer) get(conf, RdmaConf.PORT());
    this.device = get(conf, RdmaConf.DEVICE());
    this.regionSize = (Long) get(conf, RdmaConf.REGION_SIZE());
    this.maxReadsInFlightPerPeer = (Integer) get(conf, RdmaConf.MAX_READS_IN_FLIGHT_PER_PEER());
    this.maxReadSize = (Long) get(conf, RdmaConf.MAX_READ_SIZE());
    this.indexCacheSize = (Long) get(conf, RdmaConf.INDEX_CACHE_SIZE());
    this.readTimeoutMs = (Long) get(conf, RdmaConf.READ_TIMEOUT());
    this.allowUnencryptedRdma = (Boolean) get(conf, RdmaConf.ALLOW_UNENCRYPTED_RDMA());
    this.connectTimeoutMs = (Long) get(conf, RdmaConf.CONNECT_TIMEOUT());
    this.verbsCompletionThreads = (Integer) get(conf, RdmaConf.VERBS_COMPLETION_THREADS());
    this.verbsReceivePoolSize = (Long) get(conf, RdmaConf.VERBS_RECEIVE_POOL_SIZE());
    this.verbsMapMode = get(conf, RdmaConf.VERBS_MAP_MODE());
    this.tcpMaxConnectionsPerAddress =
        (Integer) get(conf, RdmaConf.TCP_MAX_CONNECTIONS_PER_ADDRESS());
    this.tcpMaxRequestFrameSize = (Long) get(conf, RdmaConf.TCP_MAX_REQUEST_FRAME_SIZE());
    this.verbsOdp = get(conf, RdmaConf.VERBS_ODP());
  }

  @SuppressWarnings("unchecked")
  private static <T> T get(SparkConf conf, ConfigEntry<?> entry) {
    try {
      return (T) conf.get(entry);
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
    return transport;
  }

  /** Empty when the transport should choose. */
  public String bindAddress() {
    return bindAddress;
  }

  public int port() {
    return port;
  }

  /** Empty, "dev" or "dev:port". */
  public String device() {
    return device;
  }

  public long regionSize() {
    return regionSize;
  }

  public int maxReadsInFlightPerPeer() {
    return maxReadsInFlightPerPeer;
  }

  /** Longest single read; larger blocks are read in pieces. */
  public long maxReadSize() {
    return maxReadSize;
  }

  /** Bytes of map-output indexes a reducer executor keeps cached (0: none). */
  public long indexCacheSize() {
    return indexCacheSize;
  }

  public long readTimeoutMs() {
    return readTimeoutMs;
  }

  public boolean allowUnencryptedRdma() {
    return allowUnencryptedRdma;
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
    if (networkCrypto && !filesEncrypted && !allowUnencryptedRdma) {
      return "spark.network.crypto.enabled=true asks for encrypted traffic, but RDMA READ "
          + "moves shuffle bytes unencrypted; enable spark.io.encryption.enabled (shuffle files "
          + "become ciphertext), use spark.shuffle.rdma.transport=tcp (encrypted), or set "
          + "spark.shuffle.rdma.allowUnencryptedRdma=true if the RDMA fabric is isolated.";
    }
    return null;
  }

  public long connectTimeoutMs() {
    return connectTimeoutMs;
  }

  /** Completion-queue polling threads of the verbs transport. */
  public int verbsCompletionThreads() {
    return verbsCompletionThreads;
  }

  /** Bytes registered once for RDMA READ destinations on the verbs transport. */
  public long verbsReceivePoolSize() {
    return verbsReceivePoolSize;
  }

  /** auto, shared, sharedWritable or private (see MapModeChoice). */
  public String verbsMapMode() {
    return verbsMapMode;
  }

  public int tcpMaxConnectionsPerAddress() {
    return tcpMaxConnectionsPerAddress;
  }

  public long tcpMaxRequestFrameSize() {
    return tcpMaxRequestFrameSize;
  }

  /** auto, true or false (see OdpChoice). */
  public String verbsOdp() {
    return verbsOdp;
  }
}
