/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.config

import java.util.Locale
import java.util.concurrent.TimeUnit

import org.apache.spark.internal.config.{ConfigBuilder, ConfigEntry}
import org.apache.spark.network.util.ByteUnit

/**
 * Every `spark.shuffle.rdma.*` key, defined once with its type, default, doc and valid
 * range, through Spark's own ConfigBuilder (so SparkConf reads, validates and reports
 * them the way it does its own keys). Written in Scala because ConfigBuilder's typed
 * builders are Scala generics that Java can only reach through casts.
 *
 * `docs/configuration.md` is generated from `ALL` (see ConfigDocGenerator) and a unit test
 * fails when the two differ.
 */
object RdmaConf {
  val PREFIX = "spark.shuffle.rdma."
  private val V = "0.1.0"

  // Each entry adds itself here as it is defined, so a new key is one statement: no list to
  // keep in step. Must stay above the first entry (object fields initialise in order).
  private val defined = scala.collection.mutable.ArrayBuffer[ConfigEntry[_]]()

  private def define[T](entry: ConfigEntry[T]): ConfigEntry[T] = {
    defined += entry
    entry
  }

  val TRANSPORT: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "transport")
    .doc("Which transport moves shuffle blocks. 'verbs': RDMA READ through DiSNI (fails at " +
      "startup, saying what is missing, when no RDMA device works). 'tcp': the same one-sided " +
      "reads emulated over TCP. 'auto': verbs when a device opens and the native layer loads, " +
      "else tcp, with one log line saying why.")
    .version(V)
    .stringConf
    .transform(_.trim.toLowerCase(Locale.ROOT))
    .checkValues(Set("auto", "verbs", "tcp"))
    .createWithDefault("auto"))

  val BIND_ADDRESS: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "bindAddress")
    .doc("IP address the transport serves on. Empty: on verbs the IP of the netdev behind " +
      "the chosen RDMA port; on tcp the executor's own address (spark.driver.host / " +
      "SPARK_LOCAL_IP, as Spark's block manager uses).")
    .version(V)
    .stringConf
    .transform(_.trim)
    .createWithDefault(""))

  val PORT: ConfigEntry[Int] = define(ConfigBuilder(PREFIX + "port")
    .doc("Port the transport serves on; 0 picks a free port. With several executors per " +
      "host keep 0.")
    .version(V)
    .intConf
    .checkValue(p => p >= 0 && p <= 65535, "must be in [0, 65535]")
    .createWithDefault(0))

  val DEVICE: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "device")
    .doc("RDMA device (as in /sys/class/infiniband, e.g. mlx5_0 or rxe0) and optional port " +
      "('mlx5_0:1') for the verbs transport. Empty: the first device with an ACTIVE port.")
    .version(V)
    .stringConf
    .transform(_.trim)
    .createWithDefault(""))

  val REGION_SIZE: ConfigEntry[Long] = define(ConfigBuilder(PREFIX + "regionSize")
    .doc("Largest memory region one registration covers. A map output larger than this is " +
      "registered as several regions (DiSNI takes an int length, and smaller regions pin " +
      "less at a time).")
    .version(V)
    .bytesConf(ByteUnit.BYTE)
    .checkValue(v => v >= (1L << 20) && v <= (1L << 30), "must be in [1m, 1g]")
    .createWithDefaultString("1g"))

  val MAX_READS_IN_FLIGHT_PER_PEER: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "maxReadsInFlightPerPeer")
      .doc("Reads one executor keeps in flight to one peer; more wait in the channel. On tcp " +
        "it bounds pending reads, sent in batches of at most a quarter of this many (and 64), " +
        "and waiting reads go out once a quarter of this many have been answered, with one " +
        "write; on verbs it bounds each queue pair's send queue, " +
        "which keeps at most the READ depth negotiated with the peer posted (see " +
        "verbs.queuePairsPerPeer).")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 65536, "must be in [1, 65536]")
      .createWithDefault(256))

  val MAX_READ_SIZE: ConfigEntry[Long] = define(ConfigBuilder(PREFIX + "maxReadSize")
    .doc("Longest single one-sided read. A block larger than this (or than a quarter of " +
      "spark.shuffle.rdma.verbs.receivePoolSize on verbs, whichever is smaller) is read in " +
      "pieces of at most this size; blocks over spark.network.maxRemoteBlockSizeFetchToMem " +
      "stream piece by piece into Spark's download file, smaller ones are assembled in memory.")
    .version(V)
    .bytesConf(ByteUnit.BYTE)
    .checkValue(v => v >= (64L << 10) && v <= (1L << 30), "must be in [64k, 1g]")
    .createWithDefaultString("32m"))

  val READ_TIMEOUT: ConfigEntry[Long] = define(ConfigBuilder(PREFIX + "readTimeout")
    .doc("A read that has not completed after this long fails; its fetch is tried again " +
      "within spark.shuffle.io.maxRetries and spark.shuffle.io.retryWait, as Spark's own " +
      "client retries, and then becomes a fetch failure (and a map stage retry).")
    .version(V)
    .timeConf(TimeUnit.MILLISECONDS)
    .checkValue(v => v >= 100 && v <= TimeUnit.HOURS.toMillis(1), "must be in [100ms, 1h]")
    .createWithDefaultString("120s"))

  val CONNECT_TIMEOUT: ConfigEntry[Long] = define(ConfigBuilder(PREFIX + "connectTimeout")
    .doc("How long connecting to a peer may take (on verbs: address and route resolution " +
      "plus the RDMA-CM handshake) before the fetch fails.")
    .version(V)
    .timeConf(TimeUnit.MILLISECONDS)
    .checkValue(v => v >= 100 && v <= TimeUnit.MINUTES.toMillis(10), "must be in [100ms, 10min]")
    .createWithDefaultString("30s"))

  val ALLOW_UNENCRYPTED_RDMA: ConfigEntry[Boolean] = define(
    ConfigBuilder(PREFIX + "allowUnencryptedRdma")
      .doc("RDMA READ moves bytes as they are in memory. With spark.network.crypto.enabled " +
        "and without spark.io.encryption.enabled (which makes shuffle files ciphertext), the " +
        "verbs transport refuses to start unless this is true, i.e. the operator states that " +
        "the RDMA fabric is isolated; 'auto' then picks tcp, which encrypts.")
      .version(V)
      .booleanConf
      .createWithDefault(false))

  val VERBS_COMPLETION_THREADS: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "verbs.completionThreads")
      .doc("Threads that poll RDMA completion queues on the verbs transport, shared by all " +
        "peers (each connection is served by one of them). More only help with many busy peers.")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 64, "must be in [1, 64]")
      .createWithDefault(2))

  val VERBS_RECEIVE_POOL_SIZE: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "verbs.receivePoolSize")
      .doc("Memory registered once at startup on the verbs transport that RDMA READs land in " +
        "(reused, never registered on the read path). Holds the bytes of reads in flight " +
        "plus fetched blocks not yet released; a read that finds no memory in it within " +
        "spark.shuffle.rdma.verbs.poolWait lands in memory of its own. Reads are at most a " +
        "quarter of it (larger blocks are read in pieces). Counts against the memlock limit.")
      .version(V)
      .bytesConf(ByteUnit.BYTE)
      .checkValue(v => v >= (1L << 20) && v <= (1L << 30), "must be in [1m, 1g]")
      .createWithDefaultString("128m"))

  val MAX_REGISTERED_BYTES: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "maxRegisteredBytes")
      .doc("Cap on the bytes of map outputs one executor keeps registered for remote READ " +
        "(0: no cap). On verbs without on-demand paging every registered byte is pinned page " +
        "cache, charged to the executor's container and never reclaimable; a map output " +
        "that would take the total past the cap is not registered and its blocks are read " +
        "through Spark's own block transfer service instead (counted in " +
        "registry.outputsOverCap and, on readers, reader.fallbackBlocks). Outputs committed " +
        "after space was freed (a shuffle cleaned up) are registered again.")
      .version(V)
      .bytesConf(ByteUnit.BYTE)
      .checkValue(v => v >= 0, "must be 0 (no cap) or a positive size")
      .createWithDefaultString("0"))

  val VERBS_POOL_WAIT: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "verbs.poolWait")
      .doc("How long a read waits for receive-pool memory before it lands in memory of its " +
        "own outside the pool (a buffer registered for that read, released with the block; " +
        "counted in transport.poolOverflows). Fetched blocks that a task has not consumed " +
        "yet hold pool memory: a task with several fetch iterators open (a sort-merge join, " +
        "several tasks per executor) can fill the pool with blocks of one iterator while " +
        "reads of another wait. Checked every 200 ms by the completion threads.")
      .version(V)
      .timeConf(TimeUnit.MILLISECONDS)
      .checkValue(v => v >= 0 && v <= TimeUnit.MINUTES.toMillis(10), "must be in [0, 10min]")
      .createWithDefaultString("250ms"))

  val VERBS_KEEPALIVE_INTERVAL: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "verbs.keepaliveInterval")
      .doc("How often the serving side probes each inbound connection with a zero-length " +
        "RDMA WRITE (it touches no memory and needs no rkey). A reader that vanished without " +
        "disconnecting (power loss, a partitioned host) answers nothing, the probe fails " +
        "after the queue pair's transport retries, and the connection's queue pair and " +
        "completion queue are freed (transport.keepaliveFailures); otherwise nothing would " +
        "ever free them, as the serving side posts nothing else. 0: no probes.")
      .version(V)
      .timeConf(TimeUnit.MILLISECONDS)
      .checkValue(v => v == 0 || (v >= 1000 && v <= TimeUnit.HOURS.toMillis(1)),
        "must be 0 or in [1s, 1h]")
      .createWithDefaultString("30s"))

  val VERBS_QUEUE_PAIRS_PER_PEER: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "verbs.queuePairsPerPeer")
      .doc("RC queue pairs (connections) one executor opens to each peer on verbs; its reads " +
        "to that peer are spread over them, each going to the one with the fewest reads " +
        "outstanding. Each queue pair keeps at most its negotiated RDMA READ depth posted " +
        "(the device's max_qp_init_rd_atom and the peer's max_qp_rd_atom, 16 on ConnectX), so " +
        "small reads need several to fill a fast link. 0: from the device, 1 on software " +
        "devices (rxe, siw), 4 on hardware. The doctor prints the depths and the count.")
      .version(V)
      .intConf
      .checkValue(v => v >= 0 && v <= 16, "must be in [0, 16]")
      .createWithDefault(0))

  val VERBS_MAX_INBOUND_QUEUE_PAIRS: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "verbs.maxInboundQueuePairs")
      .doc("Queue pairs the verbs transport's server holds for peers that read from it, in " +
        "all; a connection request beyond it is rejected before a queue pair or CQ exists " +
        "for it, with a warning at the 1st, 2nd, 4th, 8th... refusal (counted in " +
        "transport.connectionsRejected). Each reading executor holds " +
        "verbs.queuePairsPerPeer of them, so this must exceed the number of executors that " +
        "read from one executor times that; each costs a QP, a 2-entry CQ and their NIC " +
        "context (a few KiB of pinned kernel memory).")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 1048576, "must be in [1, 1048576]")
      .createWithDefault(16384))

  val VERBS_MAX_INBOUND_QUEUE_PAIRS_PER_ADDRESS: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "verbs.maxInboundQueuePairsPerAddress")
      .doc("Queue pairs the verbs transport's server holds for peers at one address (the " +
        "IPv4 address, or IPv6 /64, RDMA-CM reports for the connecting side), so one host " +
        "cannot take all of verbs.maxInboundQueuePairs; beyond it that host's connection " +
        "requests are rejected like those beyond the total. Must exceed the executors per " +
        "host times verbs.queuePairsPerPeer. With spark.authenticate, each address may also " +
        "hold at most twice this many fresh connection nonces in the 240 s replay window.")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 65536, "must be in [1, 65536]")
      .createWithDefault(1024))

  val VERBS_MAP_MODE: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "verbs.mapMode")
    .doc("How the verbs transport maps map output files for registration. 'shared': shared " +
      "read-only, pins the page cache (needs Linux 6.2+). 'sharedWritable': shared read-write " +
      "of the file opened read-write; pins the page cache on older kernels too (pages are " +
      "marked dirty; nothing writes to them). 'private': copy-on-write; the kernel pins a " +
      "private copy of every page (map outputs held twice, counted as executor memory; gauge " +
      "transport.pinnedCopiedBytes). 'auto': tries shared on every kernel (vendor kernels " +
      "backport 6.2's pin, so the release number is not trusted), sharedWritable when the " +
      "kernel refuses that pin (EFAULT, as before 6.2), private only when that is refused " +
      "too; each switch logged once per executor and kept for its lifetime. Other " +
      "registration errors (memlock, a closed transport) never switch modes: the output is " +
      "served unregistered.")
    .version(V)
    .stringConf
    .transform(_.trim)
    .checkValues(Set("auto", "shared", "sharedWritable", "private"))
    .createWithDefault("auto"))

  val VERBS_TRAFFIC_CLASS: ConfigEntry[Option[Int]] = define(
    ConfigBuilder(PREFIX + "verbs.trafficClass")
      .doc("IP type-of-service byte (0 to 255, decimal: DSCP << 2 | ECN bits) of the verbs " +
        "transport's RoCE v2 traffic, set with rdma_set_option(RDMA_OPTION_ID_TOS) on every " +
        "connection it opens and on its listening id, before the route is resolved. It picks " +
        "the switch and NIC class the READs and their responses travel in (the responder " +
        "answers in the class the reader asked for): use the class the fabric keeps lossless " +
        "with PFC, e.g. 106 (DSCP 26, ECN-capable). Unset: the device default (0 unless the " +
        "operator set the rdma_cm default_roce_tos in configfs); the doctor prints both. " +
        "docs/rdma-setup.md section 4.")
      .version(V)
      .intConf
      .checkValue(v => v >= 0 && v <= 255, "must be in [0, 255]")
      .createOptional)

  val TCP_MAX_CONNECTIONS_PER_ADDRESS: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "tcp.maxConnectionsPerAddress")
      .doc("Connections the tcp transport's server keeps open from one remote address (an " +
        "IPv4 address; an IPv6 /64) that have not completed authentication; one more is " +
        "closed at once, with a warning. With spark.authenticate a connection leaves this " +
        "count once authenticated (tcp.maxConnections still bounds it), so strangers on a " +
        "reader's host cannot push the reader's connections out; without it every " +
        "connection counts. Each executor opens one connection per peer.")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 65536, "must be in [1, 65536]")
      .createWithDefault(64))

  val TCP_MAX_CONNECTIONS: ConfigEntry[Int] = define(
    ConfigBuilder(PREFIX + "tcp.maxConnections")
      .doc("Connections the tcp transport's server keeps open in all, authenticated or not; " +
        "one more is closed at once, with a warning. Each reading executor opens one " +
        "connection per peer, so this must exceed the number of executors that read from " +
        "one executor.")
      .version(V)
      .intConf
      .checkValue(v => v >= 1 && v <= 1048576, "must be in [1, 1048576]")
      .createWithDefault(8192))

  val TCP_HANDSHAKE_TIMEOUT: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "tcp.handshakeTimeout")
      .doc("With spark.authenticate, a connection to the tcp transport's server that has not " +
        "completed Spark's auth handshake this long after it opened is closed, with a " +
        "warning, whatever it sends meanwhile.")
      .version(V)
      .timeConf(TimeUnit.MILLISECONDS)
      .checkValue(v => v >= 100 && v <= TimeUnit.MINUTES.toMillis(10), "must be in [100ms, 10min]")
      .createWithDefaultString("10s"))

  val TCP_MAX_REQUEST_FRAME_SIZE: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "tcp.maxRequestFrameSize")
      .doc("Largest frame the tcp transport's server accepts from an authenticated peer, " +
        "checked on the frame header before anything of the frame is buffered. Peers send " +
        "only batches of reads (at most 1,058 bytes); a larger frame closes the connection, " +
        "with a warning. Before authentication frames are limited to 4 KiB and must be " +
        "well-formed handshake messages.")
      .version(V)
      .bytesConf(ByteUnit.BYTE)
      .checkValue(v => v >= 2048 && v <= (16L << 20), "must be in [2k, 16m]")
      .createWithDefaultString("64k"))

  val TCP_SENDFILE_THRESHOLD: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "tcp.sendfileThreshold")
      .doc("On the tcp transport's server, a read of at least this many bytes from a map " +
        "output file is sent with sendfile from the file (zero copy, as Spark serves file " +
        "segments); shorter reads are written from the mapping, gathered with the answers " +
        "around them into one write. Each registered data region that long holds one open " +
        "file descriptor while registered. 0: never sendfile (no descriptors held). " +
        "Connections with spark.network.crypto.enabled or TLS always write from the mapping.")
      .version(V)
      .bytesConf(ByteUnit.BYTE)
      .checkValue(v => v >= 0 && v <= (1L << 30), "must be in [0, 1g]")
      .createWithDefaultString("64k"))

  val VERBS_ODP: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "verbs.odp")
    .doc("On-demand paging for map output registrations on verbs: nothing is pinned, the " +
      "device faults pages in as READs touch them. 'auto': when the device reports ODP for " +
      "RC READ (the doctor says which). 'true': required (fails at startup without it). " +
      "'false': always pin.")
    .version(V)
    .stringConf
    .transform(_.trim.toLowerCase(Locale.ROOT))
    .checkValues(Set("auto", "true", "false"))
    .createWithDefault("auto"))

  val INDEX_CACHE_SIZE: ConfigEntry[Long] = define(ConfigBuilder(PREFIX + "indexCacheSize")
    .doc("Heap one executor spends on cached map-output indexes (each (partitions + 1) x 8 " +
      "bytes plus 64 per entry). A reducer reads a map output's whole index in one READ the " +
      "first time any task of the executor touches that output, then reads each block with " +
      "one READ. Past this bound the least recently used indexes are dropped (a dropped index " +
      "is read again when needed). 32m holds the indexes of about 4,000 outputs of 1,000 " +
      "partitions or 20,000 of 200. 0 disables caching: each fetch then reads the indexes it " +
      "needs, one READ per map output.")
    .version(V)
    .bytesConf(ByteUnit.BYTE)
    .checkValue(v => v >= 0 && v <= (1L << 34), "must be in [0, 16g]")
    .createWithDefaultString("32m"))

  val VERIFY_CHECKSUMS: ConfigEntry[Boolean] = define(ConfigBuilder(PREFIX + "verifyChecksums")
    .doc("Check every block a reducer reads through the transport against the checksum " +
      "Spark's writer stored for each partition (spark.shuffle.checksum.enabled, algorithm " +
      "spark.shuffle.checksum.algorithm: ADLER32, CRC32 or CRC32C). Mappers then register " +
      "each output's checksum file next to its index, and reducers read and cache it with " +
      "the index (8 bytes per partition, no extra round trip). A mismatch fails the block " +
      "with a fetch failure naming shuffle, map, reduce partition and executor, so Spark " +
      "recomputes the output. Outputs written without checksums are read unverified " +
      "(counted as reader.checksumSkippedBlocks). Costs CPU on the reducer per byte read " +
      "(docs/benchmarks.md). Blocks Spark reads from local files are not verified here.")
    .version(V)
    .booleanConf
    .createWithDefault(false))

  val SERVICE_SOCKET: ConfigEntry[String] = define(ConfigBuilder(PREFIX + "service.socket")
    .doc("Unix socket of the node service (bin/shuffle-rdma-service) on each executor's " +
      "host, an absolute path of at most 107 bytes; empty: no node service. When set, each " +
      "executor hands every committed map output to the service, which serves it also " +
      "after the executor is gone; an output the service refuses or cannot take is " +
      "registered by the executor as without a service (registry.notHandedOver). Set " +
      "spark.shuffle.sort.io.plugin.class=org.apache.spark.shuffle.rdma.RdmaShuffleDataIO " +
      "too, so that Spark keeps an executor's map outputs when it removes the executor and " +
      "dynamic allocation runs without shuffle tracking. Turns " +
      "spark.shuffle.readHostLocalDisk off (a removed executor's files go with it). " +
      "The service serves on tcp or on verbs (a protection domain per application), as its " +
      "own --transport chose; an executor whose transport is not the service's hands it " +
      "nothing and serves its outputs itself. With spark.authenticate=true executors give " +
      "the service the application's secret and it serves the application on a port of its " +
      "own that authenticates readers with it. See docs/node-service.md.")
    .version(V)
    .stringConf
    .transform(_.trim)
    .checkValue(v => v.isEmpty || (v.startsWith("/") &&
      v.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 107),
      "must be empty or an absolute path of at most 107 bytes (a Unix socket path)")
    .createWithDefault(""))

  val SERVICE_DRIVER_TIMEOUT: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "service.driverTimeout")
    .doc("Node service only (its --conf): how long it keeps an application's map outputs " +
      "once that application's driver stops accepting TCP connections at the address the " +
      "executors announced (spark.driver.host, spark.driver.port). Past it every output, " +
      "descriptor and file of the application is released, as at a normal application end: " +
      "this is what ends the outputs of a driver that crashed or was killed, and of an " +
      "application whose end reached no service (docs/node-service.md, lease). Long enough " +
      "to ride out a driver's GC pause or a network blip: a live application whose outputs " +
      "were released gets fetch failures and recomputes them.")
    .version(V)
    .timeConf(TimeUnit.MILLISECONDS)
    .checkValue(v => v >= 1000 && v <= TimeUnit.DAYS.toMillis(7), "must be in [1s, 7d]")
    .createWithDefaultString("2min"))

  val SERVICE_DRIVER_GONE_TIMEOUT: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "service.driverGoneTimeout")
    .doc("Node service only (its --conf): how long an application's driver may refuse TCP " +
      "connections at its announced address, after it accepted one, before the service " +
      "releases the application. A refusal comes from the driver's host itself (nothing " +
      "listens on the driver's RPC port any more: the application ended or its driver " +
      "died), so it needs no allowance for network blips or GC pauses, which time out " +
      "instead of refusing and wait for spark.shuffle.rdma.service.driverTimeout. While " +
      "the driver refuses it is checked every fifth of this (at least 100ms, at most every " +
      "spark.shuffle.rdma.service.driverProbeInterval). This is what releases a finished " +
      "application on hosts without its driver within seconds, where the driver's host " +
      "stays up after it (docs/node-service.md, lease). Capped by driverTimeout; 0 turns " +
      "it off (refusals then count as any failure).")
    .version(V)
    .timeConf(TimeUnit.MILLISECONDS)
    .checkValue(v => v >= 0 && v <= TimeUnit.DAYS.toMillis(7), "must be in [0, 7d]")
    .createWithDefaultString("5s"))

  val SERVICE_DRIVER_PROBE_INTERVAL: ConfigEntry[Long] = define(
    ConfigBuilder(PREFIX + "service.driverProbeInterval")
    .doc("Node service only (its --conf): how often it checks each application's driver " +
      "(one TCP connect, closed at once; the driver's RPC server accepts and drops it). Also " +
      "the connect timeout of one check. At most spark.shuffle.rdma.service.driverTimeout.")
    .version(V)
    .timeConf(TimeUnit.MILLISECONDS)
    .checkValue(v => v >= 100 && v <= TimeUnit.MINUTES.toMillis(10), "must be in [100ms, 10min]")
    .createWithDefaultString("10s"))

  /** Every key, in definition order (docs/configuration.md lists them in this order). */
  val ALL: Seq[ConfigEntry[_]] = defined.toList
}
