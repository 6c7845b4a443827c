package org.apache.spark.shuffle.rdma.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.shuffle.rdma.bench.Tpcds;
import org.apache.spark.sql.SparkSession;

/**
 * Three TPC-DS queries (the benchmark smoke's q3, q19, q95) at scale factor 0.01 with every
 * join forced to a shuffle ({@code autoBroadcastJoinThreshold=-1}). The data is the
 * benchmark's: {@link Tpcds#generate} (io.trino.tpcds) writes it as Parquet on the host,
 * under {@code <dir>/tpcds-sf0.01-<hash>}, next to the three queries' text ({@code
 * <dir>/queries/<q>.sql}, Spark's own from the spark-sql test jar); both guests see that
 * directory at the same path. Results are compared in the benchmark's canonical form
 * ({@link Tpcds#canonical}, {@link Tpcds#sameResult}).
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
    return spark;
  }

  @Override
  public String run(SparkContext sc) throws IOException {
    return runQueries(session(sc), dir);
  }

  /** Each query's canonical rows under a "== q rows=N" header line. */
  static String runQueries(SparkSession spark, Path dir) throws IOException {
    Tpcds.registerViews(spark, Tpcds.cacheDir(dir, SCALE));
    StringBuilder b = new StringBuilder();
    for (String q : QUERIES) {
      String sql = Files.readString(dir.resolve("queries").resolve(q + ".sql"),
          StandardCharsets.UTF_8);
      List<String> rows = Tpcds.canonical(spark.sql(sql).collectAsList());
      b.append("== ").append(q).append(" rows=").append(rows.size()).append('\n');
      rows.forEach(r -> b.append(r).append('\n'));
    }
    return b.toString();
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
