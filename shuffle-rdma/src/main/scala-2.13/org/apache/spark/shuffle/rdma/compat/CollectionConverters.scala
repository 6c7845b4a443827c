/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.compat

/**
 * `asScala` / `asJava` for the plugin's Scala glue on Scala 2.13 (what
 * `scala.jdk.CollectionConverters` offers). Its Scala 2.12 twin is in src/main/scala-2.12:
 * `import org.apache.spark.shuffle.rdma.compat.CollectionConverters._` works on both.
 */
object CollectionConverters
  extends scala.collection.convert.AsJavaExtensions
  with scala.collection.convert.AsScalaExtensions
