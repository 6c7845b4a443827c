# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared by bin/run-demo and bin/check-submit: Spark from Maven's jars alone, and
# spark-submit of the demo job (ShuffleDemo) on local-cluster[2,1,1024]. Needs $root.

# spark_runtime WORK [MAVEN_PROFILE]: sets spark_cp (Spark's runtime class path, without any
# shuffle-rdma jar: the plugin reaches the job only the way the caller chooses), opens (the
# JVM options Spark's launcher would add) and demo_log_conf, and exports SPARK_HOME (an empty
# jars/ folder is all local-cluster needs) and SPARK_LOCAL_IP.
spark_runtime() {
  local work=$1 profile=${2:-}
  mkdir -p "$work/spark-home/jars"
  mvn -B -q -pl integration-tests ${profile:+"-P$profile"} dependency:build-classpath \
    -Dmdep.outputFile="$work/cp" -Dmdep.includeScope=runtime \
    -Dmdep.excludeArtifactIds=shuffle-rdma >/dev/null
  # excludeArtifactIds does not remove a reactor sibling or a jar resolved from ~/.m2.
  spark_cp=$(tr ':' '\n' <"$work/cp" | grep -v '/shuffle-rdma/' | paste -sd:)
  opens=$(java -cp "$spark_cp" "$root/bin/lib/SparkJvmOptions.java")
  demo_log_conf="$root/integration-tests/src/main/resources/log4j2-demo.properties"
  export SPARK_HOME="$work/spark-home" SPARK_LOCAL_IP=127.0.0.1
}

# submit_demo DRIVER_CP EXECUTOR_CP [spark-submit options ...] APP_JAR [job args ...]
# Runs ShuffleDemo through SparkSubmit (java -cp stands for bin/spark-submit); with
# SUBMIT_TIMEOUT set, under timeout(1) (exit status 124 when it expires).
submit_demo() {
  local driver_cp=$1 executor_cp=$2
  shift 2
  # shellcheck disable=SC2086
  ${SUBMIT_TIMEOUT:+timeout "$SUBMIT_TIMEOUT"} java $opens -Xmx1g \
    -Dlog4j2.configurationFile="$demo_log_conf" -cp "$driver_cp" \
    org.apache.spark.deploy.SparkSubmit \
    --master 'local-cluster[2,1,1024]' \
    --class org.apache.spark.shuffle.rdma.demo.ShuffleDemo \
    --conf spark.executor.extraClassPath="$executor_cp" \
    --conf spark.shuffle.readHostLocalDisk=false \
    --conf spark.driver.host=127.0.0.1 \
    --conf spark.ui.enabled=false \
    --conf "spark.executor.extraJavaOptions=-Dlog4j2.configurationFile=$demo_log_conf" \
    "$@"
}
