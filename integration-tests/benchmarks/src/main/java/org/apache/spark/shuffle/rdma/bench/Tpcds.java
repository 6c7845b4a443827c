/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;

import io.trino.tpcds.Results;
import io.trino.tpcds.Session;
import io.trino.tpcds.Table;
import io.trino.tpcds.column.Column;
import io.trino.tpcds.column.ColumnType;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-DS: data from io.trino.tpcds (the Java port of dsdgen), generated in Spark tasks on the
 * cluster and written once as Parquet into a cache directory outside the work tree; the 103
 * v1.4 queries are Spark's own (resources tpcds/q*.sql of the spark-sql test jar).
 */
public final class Tpcds {
  /** Bump when the layout or the type mapping changes: it is part of the cache key. */
  private static final String LAYOUT = "parquet-v1;trino-tpcds-1.4;int-keys;string-chars";
  private static final String MARKER = "_TPCDS_COMPLETE";

  private Tpcds() {}

  /** The 103 query names in run order: q1..q99 with q14, q23, q24, q39 as a/b pairs. */
  public static List<String> allQueries() {
    List<String> q = new ArrayList<>();
    for (int i = 1; i <= 99; i++) {
      if (i == 14 || i == 23 || i == 24 || i == 39) {
        q.add("q" + i + "a");
        q.add("q" + i + "b");
      } else {
        q.add("q" + i);
      }
    }
    return q;
  }

  public static String queryText(String name) throws IOException {
    String res = "tpcds/" + name + ".sql";
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    try (InputStream in = cl.getResourceAsStream(res)) {
      if (in == null) throw new IOException("query resource not on the classpath: " + res);
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  public static String formatScale(double sf) {
    return sf == Math.rint(sf) ? Long.toString((long) sf) : BigDecimal.valueOf(sf)
        .stripTrailingZeros().toPlainString();
  }

  /** The cache directory for one scale factor under {@code root}. */
  public static Path cacheDir(Path root, double sf) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      byte[] h = md.digest((LAYOUT + "|sf=" + formatScale(sf)).getBytes(StandardCharsets.UTF_8));
      return root.resolve("tpcds-sf" + formatScale(sf) + "-" + HexFormat.of().formatHex(h, 0, 4));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  public static List<Table> tables() {
    List<Table> out = new ArrayList<>();
    for (Table t : Table.getBaseTables()) {
      if (!t.getName().equals("dbgen_version")) out.add(t);
    }
    return out;
  }

  public static boolean isCached(Path dir) {
    return Files.exists(dir.resolve(MARKER));
  }

  /**
   * Generates every table at scale {@code sf} into {@code dir} unless already there. Writes to
   * a temporary sibling and renames it when complete, so an interrupted run leaves no
   * half-written cache behind that a later run would trust; when another process completes the
   * same cache meanwhile, its copy is kept and this one is dropped.
   */
  public static void generate(SparkSession spark, double sf, Path dir, Progress progress)
      throws IOException {
    if (isCached(dir)) return;
    Path root = dir.getParent();
    Files.createDirectories(root);
    Path tmp = root.resolve(".tmp-" + dir.getFileName() + "-" + ProcessHandle.current().pid());
    deleteTree(tmp);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    int n = 0;
    List<Table> tables = tables();
    for (Table t : tables) {
      n++;
      int chunks = t.isSmall() ? 1 : (int) Math.max(1, Math.min(64, Math.round(sf * 8)));
      progress.line(String.format("tpcds-gen table %d of %d: %s (%d chunk%s)", n, tables.size(),
          t.getName(), chunks, chunks == 1 ? "" : "s"));
      Column[] cols = t.getColumns();
      List<StructField> fields = new ArrayList<>();
      for (Column c : cols) fields.add(DataTypes.createStructField(c.getName(),
          DataTypes.StringType, true));
      StructType schema = DataTypes.createStructType(fields);
      List<Integer> ids = new ArrayList<>();
      for (int i = 1; i <= chunks; i++) ids.add(i);
      final String name = t.getName();
      final int parallelism = chunks;
      JavaRDD<Row> rows = jsc.parallelize(ids, chunks).flatMap(chunk -> {
        Table table = Table.getTable(name);
        Session s = Session.getDefaultSession().withScale(sf).withTable(table)
            .withParallelism(parallelism).withChunkNumber(chunk);
        Iterator<List<List<String>>> it = Results.constructResults(table, s).iterator();
        return new Iterator<Row>() {
          @Override public boolean hasNext() {
            return it.hasNext();
          }

          @Override public Row next() {
            return RowFactory.create(it.next().get(0).toArray());
          }
        };
      });
      Dataset<Row> raw = spark.createDataFrame(rows, schema);
      List<String> casts = new ArrayList<>();
      for (Column c : cols) {
        casts.add("CAST(" + c.getName() + " AS " + sqlType(c.getType()) + ") AS " + c.getName());
      }
      raw.selectExpr(casts.toArray(new String[0])).write().mode(SaveMode.Overwrite)
          .parquet(tmp.resolve(t.getName()).toString());
    }
    Files.writeString(tmp.resolve(MARKER), LAYOUT + "\nscale=" + formatScale(sf) + "\n");
    publish(tmp, dir);
  }

  /**
   * Renames the complete {@code tmp} to {@code dir}. When another process (a payload build
   * beside the benchmark smoke) filled the same cache first, its copy has the same layout and
   * scale: keep it and drop ours.
   */
  static void publish(Path tmp, Path dir) throws IOException {
    try {
      Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (FileSystemException e) {
      if (!isCached(dir)) throw e;
      deleteTree(tmp);
    }
  }

  static String sqlType(ColumnType type) {
    switch (type.getBase()) {
      case IDENTIFIER:
      case INTEGER:
        return "INT";
      case DECIMAL:
        return "DECIMAL(" + type.getPrecision().get() + "," + type.getScale().get() + ")";
      case DATE:
        return "DATE";
      default:
        return "STRING";
    }
  }

  /**
   * Registers every table of {@code dir} as a temporary view, with the two columns that the
   * Trino generator names differently renamed to the names of Spark's TPC-DS schema (the
   * queries use c_last_review_date, e.g. q30).
   */
  public static void registerViews(SparkSession spark, Path dir) {
    for (Table t : tables()) {
      spark.read().parquet(dir.resolve(t.getName()).toString())
          .withColumnRenamed("c_last_review_date_sk", "c_last_review_date")
          .withColumnRenamed("p_response_targe", "p_response_target")
          .createOrReplaceTempView(t.getName());
    }
  }

  /** A query's result in canonical form: one string per row, rows sorted. */
  public static List<String> canonical(List<Row> rows) {
    List<String> out = new ArrayList<>(rows.size());
    for (Row r : rows) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        if (i > 0) b.append('|');
        b.append(canonicalValue(r.get(i)));
      }
      out.add(b.toString());
    }
    out.sort(Comparator.naturalOrder());
    return out;
  }

  /** Floating point to 9 significant digits (the tolerance); decimals without trailing zeros. */
  static String canonicalValue(Object v) {
    if (v == null) return "NULL";
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) return Double.toString(d);
      if (d == 0) return "0";
      return new BigDecimal(d).round(new MathContext(9)).stripTrailingZeros().toPlainString();
    }
    if (v instanceof BigDecimal) {
      BigDecimal d = (BigDecimal) v;
      return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }
    return v.toString();
  }

  /**
   * Equal results: same rows in canonical form, or, when the rounding of a float fell on
   * different sides of a digit, the same number of rows with every float within a relative
   * 1e-7 of the other after sorting.
   */
  public static boolean sameResult(List<String> a, List<String> b) {
    if (a.equals(b)) return true;
    if (a.size() != b.size()) return false;
    for (int i = 0; i < a.size(); i++) {
      String[] x = a.get(i).split("\\|", -1);
      String[] y = b.get(i).split("\\|", -1);
      if (x.length != y.length) return false;
      for (int j = 0; j < x.length; j++) {
        if (x[j].equals(y[j])) continue;
        try {
          double p = Double.parseDouble(x[j]);
          double q = Double.parseDouble(y[j]);
          if (Math.abs(p - q) > 1e-7 * Math.max(Math.abs(p), Math.abs(q))) return false;
        } catch (NumberFormatException e) {
          return false;
        }
      }
    }
    return true;
  }

  /** Deletes a tree, only ever called on this class's own temporary directory. */
  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) return;
    if (!p.getFileName().toString().startsWith(".tmp-tpcds-")) {
      throw new IOException("refusing to delete " + p);
    }
    try (Stream<Path> walk = Files.walk(p)) {
      List<Path> all = new ArrayList<>();
      walk.forEach(all::add);
      all.sort(Comparator.reverseOrder());
      for (Path q : all) Files.delete(q);
    }
  }

  /** Progress sink. */
  public interface Progress {
    void line(String s);
  }
}
