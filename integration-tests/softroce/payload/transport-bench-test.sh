#!/usr/bin/env bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# The transport benchmark's verbs column, run inside the Soft-RoCE guest (one host: both JVMs
# in the one guest, talking over rxe0 on GUEST_IP, i.e. loopback through the soft RDMA
# device). Per mode (spark: Spark's block serving path; tcp: the plugin's tcp transport;
# verbs: the plugin's verbs transport, one RDMA READ per block of a registered mapping of the
# file, no server thread involved) a server JVM serves a pattern file and a client JVM
# fetches TB_BYTES per block size (TransportBench; at 16 MiB the floor of 4 blocks), checking
# every block's first and last word; the client reads the server's CPU (whole process, user +
# system, and per thread) from /proc before and after each measured run, and over
# TB_IDLE seconds of the server doing nothing (its idle floor).
# Payload: make-payload's (lib/*.jar with benchmarks.jar, app/demo.jar = the integration-tests
# jar holding TransportBench, jvm-opens); run it as the payload's guest-test.sh:
#   MVN_OFFLINE=1 integration-tests/softroce/make-payload /tmp/p
#   cp integration-tests/softroce/payload/transport-bench-test.sh /tmp/p/guest-test.sh
#   flock /work/vm.lock integration-tests/softroce/run --suite bookworm --payload /tmp/p
# Writes results.csv (TransportBench's rows, rep first) and logs/ under
# $SOFTROCE_RESULTS_DIR/transport-bench (the host's results dir) or ./out/transport-bench;
# the report (TransportReport, needs JFreeChart: run it on the host) is built from that CSV.
# Under TCG emulation throughput means nothing; correctness and the server CPU do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GUEST_IP:?GUEST_IP must be set}"
: "${RDMA_DEVICE:=rxe0}"
: "${TB_SIZES:=4k,64k,1m,16m}" "${TB_BYTES:=16m}" "${TB_FILE:=64m}" "${TB_REPS:=1}"
: "${TB_MODES:=spark tcp verbs}" "${TB_IDLE:=5}"
ulimit -l unlimited 2>/dev/null || echo "note: could not raise memlock ($(ulimit -l)); registration may fail"
T0=$(date +%s)
phase() { echo "@@softroce@@ transport-bench +$(( $(date +%s) - T0 ))s: $*"; }
to_bytes() {
  local v=${1,,} m=1
  case "$v" in *k) m=1024 ;; *m) m=$((1024 * 1024)) ;; *g) m=$((1024 * 1024 * 1024)) ;; esac
  echo $(( ${v%[kmg]} * m ))
}
bytes_n=$(to_bytes "$TB_BYTES") file_n=$(to_bytes "$TB_FILE")

# Under TCG the JIT's compile work is the JVM's largest cost: C1 only, serial GC (all modes).
fast_jvm=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto)
read -r -a opens < "$here/jvm-opens"
jvm=(java "${opens[@]}" "${fast_jvm[@]}" -Xmx1g -XX:MaxDirectMemorySize=512m
  -Dlog4j2.configurationFile="$here/app/log4j2-demo.properties"
  -Dspark.shuffle.rdma.device="$RDMA_DEVICE" -cp "$here/lib/*:$here/app/demo.jar")
main=org.apache.spark.shuffle.rdma.transportbench.TransportBench
results=${SOFTROCE_RESULTS_DIR:-$here/out}/transport-bench
rm -rf "$results"; mkdir -p "$results/logs"
work="$(mktemp -d)"
server_pid=""
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
csv=$results/results.csv
echo "rep,mode,size,blocks,bytes,seconds,clientCpuS,serverCpuS,requests" > "$csv"

phase "sizes $TB_SIZES, $TB_BYTES per size, file $TB_FILE, $TB_REPS rep(s), modes: $TB_MODES; both JVMs on $GUEST_IP ($RDMA_DEVICE)"
run_mode() { # rep mode
  local rep=$1 mode=$2 info=$work/info-$1-$2 t=$(date +%s) status=0
  "${jvm[@]}" "$main" serve "$mode" "$work/served.data" "$file_n" "$GUEST_IP" "$info" \
    > "$results/logs/server-$rep-$mode.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 600); do [[ -f $info ]] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
  if [[ ! -f $info ]]; then
    tail -n 30 "$results/logs/server-$rep-$mode.log"
    phase "$mode server did not start"; return 1
  fi
  timeout 900 "${jvm[@]}" -Dbench.bind="$GUEST_IP" -Dbench.idleSeconds="$TB_IDLE" "$main" \
    fetch "$mode" "$info" "$TB_SIZES" "$bytes_n" 2> "$results/logs/client-$rep-$mode.log" \
    > "$work/rows" || status=$?
  sed "s/^/$rep,/" "$work/rows" >> "$csv"
  kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true
  server_pid=""
  while read -r l; do phase "  $rep,$l"; done < "$work/rows"
  { grep -E "server CPU|server idle" "$results/logs/client-$rep-$mode.log" || true; } | while read -r l; do phase "  $l"; done
  if [[ $status -ne 0 ]]; then
    tail -n 30 "$results/logs/client-$rep-$mode.log"
    phase "$mode client FAILED (status $status)"; return 1
  fi
  phase "$mode done in $(( $(date +%s) - t )) s"
}
for rep in $(seq 1 "$TB_REPS"); do
  # Order alternating per repetition, as the host benchmark does.
  order=$TB_MODES
  (( rep % 2 == 0 )) && order=$(echo "$TB_MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
  for mode in $order; do
    phase "rep $rep: $mode"
    run_mode "$rep" "$mode"
  done
done
expected=$(( TB_REPS * $(echo $TB_MODES | wc -w) * $(echo "$TB_SIZES" | tr ',' '\n' | wc -l) ))
rows=$(( $(wc -l < "$csv") - 1 ))
[[ $rows -eq $expected ]] || { phase "expected $expected result rows, got $rows"; exit 1; }
phase "all modes passed (every block checked); results in $results"
