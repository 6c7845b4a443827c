#!/usr/bin/env bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Runs inside the Soft-RoCE guest (Debian bookworm, openjdk-17-jre-headless, rdma-core,
# rxe0 ACTIVE). Env: RDMA_DEVICE (e.g. rxe0), GUEST_IP (the IPv4 of rxe0's netdev).
# Payload layout (integration-tests/softroce/make-payload): this script, lib/*.jar (shuffle-rdma.jar + the
# Spark runtime jars), app/demo.jar + app/log4j2-demo.properties, jvm-opens.
# Phases, each must pass: the doctor, the verbs transport's two-JVM self-test (with
# spark.authenticate: a reader with a wrong secret is run first and must be rejected, read
# nothing and be counted by the server, over 3 + VERBS_SELFTEST_FLOOD (default 20) connect
# requests to one server transport and 1 to the other; the server must log those refusals
# at most at the 1st, 2nd, 4th... and still accept the reader that follows); with
# ONE_HOST_SPARK_JOB=1 a Spark job on local-cluster (separate executor JVMs) with
# spark.shuffle.rdma.transport=verbs, and with ONE_HOST_SKEW=1 a skewed job (SkewDemo) whose
# blocks are larger than the receive pool.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GUEST_IP:?GUEST_IP must be set}"
: "${RDMA_DEVICE:=rxe0}"
export RDMA_DEVICE
ulimit -l unlimited 2>/dev/null || echo "note: could not raise memlock ($(ulimit -l)); registration may fail"
T0=$(date +%s)
# Lines marked @@softroce@@ are streamed by the host harness as progress.
phase() { echo "@@softroce@@ guest-test +$(( $(date +%s) - T0 ))s: $*"; }

# Under TCG the JIT's compile work is the JVM's largest cost: C1 only, serial GC.
fast_jvm=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto)
read -r -a opens < "$here/jvm-opens"
java_opts=("${opens[@]}" "${fast_jvm[@]}" -Xmx1g)
cp="$here/lib/*"
main=org.apache.spark.shuffle.rdma.transport.verbs.VerbsSelfTest
work="$(mktemp -d)"
trap 'rm -rf "$work"; [[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null || true' EXIT

phase "doctor"
java "${fast_jvm[@]}" -jar "$here/lib/shuffle-rdma.jar" doctor || { echo "doctor reports verbs cannot run"; exit 1; }

phase "verbs self-test: server and client JVMs on $GUEST_IP ($RDMA_DEVICE), spark.authenticate on"
# Server and client share the application secret; the intruder has another one.
secret="selftest-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
VERBS_SELFTEST_SECRET="$secret" java "${java_opts[@]}" -cp "$cp" "$main" server "$GUEST_IP" 47470 "$work" > "$work/server.log" 2>&1 &
server_pid=$!
status=0
# The intruder must be rejected on every attempt; it exits 1 if it ever connects.
export VERBS_SELFTEST_FLOOD=${VERBS_SELFTEST_FLOOD:-20}
VERBS_SELFTEST_SECRET="wrong-$secret" timeout 600 java "${java_opts[@]}" -cp "$cp" "$main" intruder "$GUEST_IP" "$work" \
  > "$work/intruder.log" 2>&1 || status=$?
cat "$work/intruder.log"
if [[ $status -ne 0 ]]; then
  phase "wrong-secret reader was NOT refused as required (status $status)"
  grep -h -E "INTRUDER|connectionsRejected|must" "$work/intruder.log" | while read -r l; do phase "  $l"; done
  touch "$work/cmd-stop" "$work/cmd-reregister"
  exit 1
fi
{ grep -E "attempt|rejected|flood|: ok" "$work/intruder.log" -h || true; } | while read -r l; do phase "  $l"; done
# Refusals are logged at the 1st, 2nd, 4th... per server transport: for n refusals at most
# floor(log2 n) + 1 lines each (fewer if the server's log level hides warnings).
logged=$(grep -c "rejected RDMA connection request" "$work/server.log" || true)
bound=$(( $(awk -v n=$((3 + VERBS_SELFTEST_FLOOD)) 'BEGIN { print int(log(n) / log(2)) + 1 }') + 1 ))
phase "  server log: $logged refusal lines for $((4 + VERBS_SELFTEST_FLOOD)) refused requests (at most $bound)"
[[ $logged -le $bound ]] || { phase "refusals logged $logged times, more than $bound"; touch "$work/cmd-stop" "$work/cmd-reregister"; exit 1; }
VERBS_SELFTEST_SECRET="$secret" VERBS_SELFTEST_ROUNDS=${VERBS_SELFTEST_ROUNDS:-4} timeout 900 java "${java_opts[@]}" -cp "$cp" "$main" client "$GUEST_IP" "$work" \
  > "$work/client.log" 2>&1 || status=$?
cat "$work/client.log"
wait "$server_pid" || status=$((status == 0 ? 1 : status))
server_pid=
echo "-- server log"; tail -n 50 "$work/server.log"
{ grep -E "rounds|: ok|PASS|client stats|reads of at most|reads failed|pinned|map mode|stopped cleanly|READ depth|CQ drains" "$work/client.log" "$work/server.log" -h || true; } | while read -r l; do phase "  $l"; done
[[ $status -eq 0 ]] || { phase "verbs self-test FAILED (status $status)"; exit "$status"; }

# The Spark job: the README's demo (sort shuffle, then the RDMA manager, in one driver) on
# local-cluster[2,1,768]: a master and two workers in the driver JVM, each executor its own
# JVM. readHostLocalDisk=false keeps Spark from reading a same-host peer's files directly, so
# every remote block is an RDMA READ between executor JVMs. EXPECT_TRANSPORT=verbs makes the
# demo fail unless every executor ran verbs (transport=verbs already refuses to fall back).
# spark.authenticate is on here (the executors get the secret from Spark, so every verbs
# connection between them is authenticated); the skewed job below runs without it.
mkdir -p "$work/spark-home/jars"
export SPARK_HOME="$work/spark-home" SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP="$GUEST_IP"
export EXPECT_TRANSPORT=verbs
# The sort-shuffle reference runs in the driver alone (local[2]): same result to compare,
# without two more executor JVMs to start under emulation.
export DEMO_REFERENCE_MASTER="local[2]"
log_conf="$here/app/log4j2-demo.properties"
exec_opts="-Dlog4j2.configurationFile=$log_conf ${fast_jvm[*]}"

# spark_on_verbs NAME CLASS "EXTRA CONF..." ARGS...: one demo app on local-cluster[2,1,768]
# over verbs; its summary lines also go out as progress; exits the test if the app fails.
spark_on_verbs() {
  local name=$1 class=$2 extra=$3 job
  shift 3
  local conf=()
  for c in $extra; do conf+=(--conf "$c"); done
  set +e
  timeout 1200 java "${java_opts[@]}" -Dlog4j2.configurationFile="$log_conf" -cp "$cp" \
    org.apache.spark.deploy.SparkSubmit \
    --master 'local-cluster[2,1,768]' \
    --class "$class" \
    --conf spark.executor.extraClassPath="$cp" \
    --conf "spark.executor.extraJavaOptions=$exec_opts" \
    --conf spark.executor.memory=512m \
    --conf spark.shuffle.rdma.transport=verbs \
    --conf spark.shuffle.rdma.device="$RDMA_DEVICE" \
    --conf spark.shuffle.readHostLocalDisk=false \
    --conf spark.driver.host="$GUEST_IP" \
    --conf spark.ui.enabled=false \
    --conf spark.network.timeout=600s \
    --conf spark.executor.heartbeatInterval=60s \
    "${conf[@]}" \
    "$here/app/demo.jar" "$@" 2>&1 | while IFS= read -r l; do
      # everything to the console; the summary lines also as progress
      case "$l" in
        "== "*|*"plugin reader."*|*"plugin transport."*|"remote blocks"*|"job wall"*) phase "  $l" ;;
        *) echo "$l" ;;
      esac
    done
  job=${PIPESTATUS[0]}
  set -e
  [[ $job -eq 0 ]] || { phase "$name FAILED (status $job)"; exit 1; }
}

# Off unless ONE_HOST_SPARK_JOB=1 (not in CI since stop 33: 375 s under TCG, given to the
# two-host run's node-service application; the two-host run has Spark jobs on verbs across two
# kernels, and on 6.1 the self-test above covers what the kernel decides: the map mode and
# authenticated connections).
if [[ ${ONE_HOST_SPARK_JOB:-0} == 1 ]]; then
  phase "Spark job on verbs: local-cluster[2,1,768], demo ${SPARK_JOB_RECORDS:=40000} records, spark.authenticate on"
  spark_on_verbs "Spark job on verbs" org.apache.spark.shuffle.rdma.demo.ShuffleDemo \
    "spark.shuffle.rdma.verbs.receivePoolSize=32m spark.authenticate=true spark.authenticate.secret=$secret" \
    "$SPARK_JOB_RECORDS" 4
fi

# A skewed shuffle (SkewDemo): per map task a SKEW_MB (default 12) MiB block for partition 0, with
# a 4 MiB receive pool (reads of at most 1 MiB), 4 MiB regions (the block crosses region
# boundaries) and maxRemoteBlockSizeFetchToMem=2m (it streams into Spark's download file).
# SkewDemo exits 1 unless the result equals the sort shuffle's, the large blocks took several
# reads and at least one block went to disk; its counters give reads per block, reconnects
# and the bytes pinned as private copies. Off unless ONE_HOST_SKEW=1: CI's two-host run has
# the same job on 6.12 (the pieces and the download file are the reader's, not the kernel's),
# and here it is a second application, two more executor JVMs: 330 s under TCG.
: "${SKEW_MB:=12}"
if [[ ${ONE_HOST_SKEW:-0} == 1 ]]; then
  phase "skewed Spark job on verbs: local-cluster[2,1,768], ${SKEW_MB} MiB per map to one partition"
  spark_on_verbs "skewed Spark job on verbs" org.apache.spark.shuffle.rdma.demo.SkewDemo \
    "spark.shuffle.rdma.verbs.receivePoolSize=4m spark.shuffle.rdma.regionSize=4m spark.network.maxRemoteBlockSizeFetchToMem=2m" \
    "$SKEW_MB" 4 2
fi
phase "all guest tests passed"
