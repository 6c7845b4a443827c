/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.bench.Tpcds;
import org.apache.spark.sql.SparkSession;

/**
 * The sort-shuffle results of the two-host run's workloads ({@link TwoHostWorkloads}), computed
 * once on the host at native speed by integration-tests/softroce/make-payload: {@code <refDir>/skew.txt},
 * {@code tpcds.txt}, {@code blip.txt}, {@code cap.txt}, {@code fault.txt} and {@code kill.txt}.
 * It also writes the TPC-DS data the guests read
 * ({@link Tpcds#generate}, the benchmark's generator, into {@code <tpcdsDir>}) and the three
 * queries' text ({@code <tpcdsDir>/queries/<q>.sql}, from the spark-sql test jar on the class
 * path), so that both sides run the same queries on the same data.
 *
 * <p>Arguments: {@code refDir tpcdsDir [cacheRoot]}. With {@code cacheRoot} (the benchmark's
 * TPC-DS cache, {@code /var/cache/spark-shuffle-rdma} in CI, where its smoke run already
 * generated SF 0.01) the data is generated there unless cached, then copied.
 */
public final class WorkloadReferences {
  private WorkloadReferences() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2 && args.length != 3) {
      System.err.println("usage: WorkloadReferences refDir tpcdsDir [cacheRoot]");
      System.exit(2);
    }
    Path refDir = Files.createDirectories(Path.of(args[0]));
    Path tpcdsDir = Files.createDirectories(Path.of(args[1]));
    SparkConf conf = new SparkConf().setMaster("local[2]").setAppName("two-host-references")
        .set("spark.shuffle.manager", "sort").set("spark.ui.enabled", "false");
    SparkContext sc = new SparkContext(conf);
    try {
      write(refDir, "skew", new SkewWorkload().run(sc));
      write(refDir, "poolpressure", PoolPressureWorkload.job(sc));
      SparkSession spark = TpcdsWorkload.session(sc);
      Path data = Tpcds.cacheDir(tpcdsDir, TpcdsWorkload.SCALE);
      Path source = args.length == 3
          ? Tpcds.cacheDir(Path.of(args[2]), TpcdsWorkload.SCALE) : data;
      System.out.println("TPC-DS SF " + TpcdsWorkload.SCALE + ": " + source
          + (Tpcds.isCached(source) ? " (cached)" : " (generating)"));
      Tpcds.generate(spark, TpcdsWorkload.SCALE, source, line -> System.out.println("  " + line));
      if (!source.equals(data)) {
        copyTree(source, data);
      }
      Path queries = Files.createDirectories(tpcdsDir.resolve("queries"));
      for (String q : TpcdsWorkload.QUERIES) {
        Files.writeString(queries.resolve(q + ".sql"), Tpcds.queryText(q), StandardCharsets.UTF_8);
      }
      TpcdsWorkload.writeSchemas(spark, tpcdsDir);
      write(refDir, "tpcds", TpcdsWorkload.runQueries(spark, tpcdsDir));
      String sums =
          FaultWorkload.render(FaultWorkload.sums(JavaSparkContext.fromSparkContext(sc)).collect());
      write(refDir, "blip", sums); // the same job, read through an outage
      write(refDir, "fault", sums);
      write(refDir, "cap", CapWorkload.job(sc));
      write(refDir, "kill", KillWorkload.job(KillWorkload.input(
          JavaSparkContext.fromSparkContext(sc)), "none"));
    } finally {
      sc.stop();
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  private static void write(Path dir, String name, String text) throws Exception {
    Path f = dir.resolve(name + ".txt");
    Files.writeString(f, text, StandardCharsets.UTF_8);
    System.out.println("sort-shuffle reference " + name + " (local[2]): "
        + text.lines().count() + " lines -> " + f);
  }
}
