/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import io.trino.tpcds.Table;
import org.apache.spark.SparkContext;
import org.apache.spark.shuffle.rdma.bench.Tpcds;
import org.apache.spark.sql.SparkSession;

/**
 * Three TPC-DS queries (the benchmark smoke's q3, q19, q95) at scale factor 0.01 with every
 * join forced to a shuffle ({@code autoBroadcastJoinThreshold=-1}). The data is the
 * benchmark's: {@link Tpcds#generate} (io.trino.tpcds) writes it as Parquet on the host,
 * under {@code <dir>/tpcds-sf0.01-<hash>}, next to the three queries' text ({@code
 * <dir>/queries/<q>.sql}, Spark's own from the spark-sql test jar) and the tables' schemas
 * ({@code <dir>/schemas}); both guests see that directory at the same path. Results are
 * compared in the benchmark's canonical form ({@link Tpcds#canonical},
 * {@link Tpcds#sameResult}).
 */
final class TpcdsWorkload implements Workload {
  static final double SCALE = 0.01;
  static final List<String> QUERIES = List.of("q3", "q19", "q95");
  /** Few reduce partitions: every task costs seconds under emulation. */
  static final int SHUFFLE_PARTITIONS = 4;

  private final Path dir;

  TpcdsWorkload(Path dir) {
    this.dir = dir;
  }

  @Override
  public String name() {
    return "tpcds";
  }

  /** The session the queries run in, on {@code sc}, with joins forced to shuffle. */
  static SparkSession session(SparkContext sc) {
    SparkSession spark = SparkSession.builder().config(sc.getConf()).getOrCreate();
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    spark.conf().set("spark.sql.shuffle.partitions", Integer.toString(SHUFFLE_PARTITIONS));
    // No generated code: compiling it (Janino, then the JIT) costs more than these few rows
    // do under emulation, and the shuffle is the same either way.
    spark.conf().set("spark.sql.codegen.wholeStage", "false");
    spark.conf().set("spark.sql.codegen.factoryMode", "NO_CODEGEN");
    return spark;
  }

  /**
   * Writes each table's schema as DDL ({@code <dir>/schemas/<table>.ddl}, inferred from its
   * Parquet files here), so that {@link #registerViews} reads no footer: Spark infers a
   * Parquet schema with a job of its own per table, 24 jobs on the emulated cluster.
   */
  static void writeSchemas(SparkSession spark, Path dir) throws IOException {
    Path data = Tpcds.cacheDir(dir, SCALE);
    Path schemas = Files.createDirectories(dir.resolve("schemas"));
    for (Table t : Tpcds.tables()) {
      String ddl = spark.read().parquet(data.resolve(t.getName()).toString()).schema().toDDL();
      Files.writeString(schemas.resolve(t.getName() + ".ddl"), ddl, StandardCharsets.UTF_8);
    }
  }

  /**
   * {@link Tpcds#registerViews} with the schemas given ({@link #writeSchemas}): every table
   * named in {@code queries} as a temporary view, the two columns the generator names
   * differently renamed as there.
   */
  static void registerViews(SparkSession spark, Path dir, String queries) throws IOException {
    Path data = Tpcds.cacheDir(dir, SCALE);
    for (Table t : Tpcds.tables()) {
      if (!Pattern.compile("\\b" + t.getName() + "\\b").matcher(queries).find()) {
        continue; // a view costs seconds under emulation: only the tables the queries read
      }
      String ddl = Files.readString(dir.resolve("schemas").resolve(t.getName() + ".ddl"),
          StandardCharsets.UTF_8);
      spark.read().schema(ddl).parquet(data.resolve(t.getName()).toString())
          .withColumnRenamed("c_last_review_date_sk", "c_last_review_date")
          .withColumnRenamed("p_response_targe", "p_response_target")
          .createOrReplaceTempView(t.getName());
    }
  }

  @Override
  public String run(SparkContext sc) throws IOException {
    return runQueries(session(sc), dir);
  }

  /** Each query's canonical rows under a "== q rows=N" header line. */
  static String runQueries(SparkSession spark, Path dir) throws IOException {
    Map<String, String> sqlOf = new LinkedHashMap<>();
    for (String q : QUERIES) {
      sqlOf.put(q, Files.readString(dir.resolve("queries").resolve(q + ".sql"),
          StandardCharsets.UTF_8));
    }
    long t = System.nanoTime();
    registerViews(spark, dir, String.join("\n", sqlOf.values()));
    System.out.println("== tpcds: views registered in " + (System.nanoTime() - t) / 1_000_000
        + " ms");
    StringBuilder b = new StringBuilder();
    for (String q : QUERIES) {
      String sql = sqlOf.get(q);
      t = System.nanoTime();
      List<String> rows = Tpcds.canonical(spark.sql(sql).collectAsList());
      System.out.println("== tpcds: " + q + " " + rows.size() + " rows in "
          + (System.nanoTime() - t) / 1_000_000 + " ms");
      b.append("== ").append(q).append(" rows=").append(rows.size()).append('\n');
      rows.forEach(r -> b.append(r).append('\n'));
    }
    return b.toString();
  }

  /** Clean-run counters; a sort-merge join may leave fetched blocks untaken (see there). */
  @Override
  public void checkCounters(Map<String, Map<String, Long>> delta, Map<String, String> hosts,
      ExecutorTally tally, boolean zeroPinnedCopy, Checks checks) {
    TwoHostVerbsRun.counters(delta, hosts, tally, zeroPinnedCopy, false, checks);
  }

  @Override
  public boolean sameResult(String reference, String result) {
    Map<String, List<String>> want = parse(reference);
    Map<String, List<String>> got = parse(result);
    if (!want.keySet().equals(got.keySet()) || !want.keySet().containsAll(QUERIES)) {
      return false;
    }
    return want.keySet().stream().allMatch(q -> Tpcds.sameResult(want.get(q), got.get(q)));
  }

  @Override
  public String describe(String result) {
    List<String> heads = new ArrayList<>();
    result.lines().filter(l -> l.startsWith("== ")).forEach(l -> heads.add(l.substring(3)));
    return String.join(", ", heads);
  }

  private static Map<String, List<String>> parse(String text) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    List<String> current = null;
    for (String l : text.split("\n", -1)) {
      if (l.startsWith("== ")) {
        current = new ArrayList<>();
        out.put(l.substring(3).split(" ")[0], current);
      } else if (current != null && !l.isEmpty()) {
        current.add(l);
      }
    }
    return out;
  }
}
