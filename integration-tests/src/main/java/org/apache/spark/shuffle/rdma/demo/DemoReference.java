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
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import scala.Tuple3;

/**
 * The README demo job's result under Spark's sort shuffle, as text: computed once on the host
 * (integration-tests/softroce/make-payload) and compared in the emulated guest, where a second Spark
 * context would cost minutes. The text is the whole result: rows, checksum and every group.
 *
 * <p>Arguments: {@code records partitions outFile}.
 */
public final class DemoReference {
  private DemoReference() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      System.err.println("usage: DemoReference records partitions outFile");
      System.exit(2);
    }
    Tuple3<?, ?, ?> r = compute(Integer.parseInt(args[0]), Integer.parseInt(args[1]));
    Path out = Path.of(args[2]);
    Files.writeString(out, render(r), StandardCharsets.UTF_8);
    System.out.println("demo reference (sort shuffle, local[2]): " + describe(r) + " -> " + out);
  }

  /** Runs the demo job with Spark's sort shuffle in {@code local[2]}. */
  static Tuple3<?, ?, ?> compute(int records, int partitions) {
    SparkConf conf = new SparkConf().setMaster("local[2]").setAppName("demo-reference")
        .set("spark.shuffle.manager", "sort").set("spark.ui.enabled", "false");
    SparkContext sc = new SparkContext(conf);
    try {
      return ShuffleDemo.job(sc, records, partitions);
    } finally {
      sc.stop();
    }
  }

  /** The full result as text, one group per line: equal text means equal results. */
  static String render(Tuple3<?, ?, ?> r) {
    List<String> lines = new ArrayList<>();
    lines.add("rows=" + r._1());
    lines.add("checksum=" + r._2());
    scala.collection.Iterator<?> groups = ((scala.collection.Iterable<?>) r._3()).iterator();
    while (groups.hasNext()) {
      lines.add("group " + groups.next());
    }
    return String.join("\n", lines) + "\n";
  }

  /** Rows, checksum and the number of groups, for log lines. */
  static String describe(Tuple3<?, ?, ?> r) {
    return "rows=" + r._1() + " checksum=" + r._2() + " groups="
        + ((scala.collection.Iterable<?>) r._3()).size();
  }
}
