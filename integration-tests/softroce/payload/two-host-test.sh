#!/usr/bin/env bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Runs inside each guest of the Soft-RoCE two-host run (integration-tests/softroce/run
# --hosts 2), one copy per guest, each on its own kernel with its own rxe0 on its own NIC;
# the two NICs are joined by a qemu socket network. Env from the harness: SOFTROCE_ROLE (a|b),
# GUEST_IP, PEER_IP, RDMA_DEVICE, RDMA_GID_INDEX, SOFTROCE_SHARED_DIR (a 9p folder both guests
# see: how they tell each other they are ready or done).
#   both:   the doctor must pass with an ACTIVE port, a RoCE v2 IPv4 GID, RoCE MTU and memlock OK
#   host b: a standalone worker (its own JVM) joining the master on host a, until a is done
#   both:   with TWO_HOST_TOS (default 106; empty: off) the doctor reads it from a conf file and
#           must print it as the RoCE traffic class (and rdma_cm's default, configfs mounted)
#   host a: tcpdump on RDMA_NETDEV samples the run's RoCE packets (udp 4791); with
#           spark.shuffle.rdma.verbs.trafficClass=TWO_HOST_TOS every one must carry that ToS
#           in its IP header, in both directions (READs from a, responses from b and back)
#   host a: TwoHostVerbsRun: master + worker + driver in one JVM; on verbs with one executor
#           per host, one application: the demo job, the skewed job (SkewDemo), a zip over a
#           held receive pool, three TPC-DS queries, a fabric outage (blip), a shuffle over the
#           executors' cap on registered bytes (maxRegisteredBytes=20m), a fault (one
#           executor's registrations revoked between stages) and an executor killed mid-read
#           (kill, last: its host drops every packet, then SIGKILL), each result
#           equal to the sort shuffle's (computed on the host: reference/) and every counter
#           asserted (see TwoHostVerbsRun's and TwoHostWorkloads' javadoc)
# Payload layout: integration-tests/softroce/make-payload (lib/, app/demo.jar, jvm-opens).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${SOFTROCE_ROLE:?}" "${GUEST_IP:?}" "${PEER_IP:?}" "${SOFTROCE_SHARED_DIR:?}"
: "${RDMA_DEVICE:=rxe0}"
shared=$SOFTROCE_SHARED_DIR
role=$SOFTROCE_ROLE
ulimit -l unlimited
T0=$(date +%s)
phase() { echo "@@softroce@@ +$(( $(date +%s) - T0 ))s: $*"; }
fail() { phase "FAILED: $*"; echo "$*" > "$shared/$role.failed"; exit 1; }

# Under TCG the JIT's compile work is the JVM's largest cost: C1 only, serial GC.
fast_jvm=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto)
read -r -a opens < "$here/jvm-opens"
cp="$here/lib/*:$here/app/demo.jar"
work="$(mktemp -d)"
# The demo's log config plus the standalone daemons' own lines (worker registered, executor
# launched), which show how far a slow emulated cluster got.
log_conf="$work/log4j2.properties"
{ cat "$here/app/log4j2-demo.properties"
  printf '%s\n' "logger.deploy.name = org.apache.spark.deploy" "logger.deploy.level = info" \
    "logger.deploy.additivity = false" "logger.deploy.appenderRef.console.ref = console"
} > "$log_conf"
mkdir -p "$work/spark-home/jars"
export SPARK_HOME="$work/spark-home" SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP="$GUEST_IP"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # Executor logs (stdout/stderr of each executor JVM this host's worker started).
  if [[ -d "$SPARK_HOME/work" ]]; then
    mkdir -p "/results/executors-$role"
    cp -r "$SPARK_HOME/work/." "/results/executors-$role/" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# ---- traffic class: the ToS the run sets (empty: leave the device default, check nothing) ----
tos=${TWO_HOST_TOS-106}
doctor_args=()
if [[ -n $tos ]]; then
  printf 'spark.shuffle.rdma.verbs.trafficClass %s\n' "$tos" > "$work/tos.conf"
  doctor_args=("$work/tos.conf")
  # rdma_cm's configfs, so the doctor can read the device default (mkdir changes no setting).
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config 2>/dev/null || true
  mkdir -p "/sys/kernel/config/rdma_cm/$RDMA_DEVICE" 2>/dev/null || true
fi

# ---- doctor: must pass and name what the run depends on ----
phase "doctor on $(hostname) ($GUEST_IP, kernel $(uname -r), GID index ${RDMA_GID_INDEX:-none})"
set +e
java "${fast_jvm[@]}" -jar "$here/lib/shuffle-rdma.jar" doctor "${doctor_args[@]}" > "$work/doctor.log" 2>&1
doctor_rc=$?
set -e
cat "$work/doctor.log"
cp "$work/doctor.log" /results/doctor.log
[[ $doctor_rc -eq 0 ]] || fail "doctor exited $doctor_rc"
! grep -q '^\[FAIL\]' "$work/doctor.log" || fail "doctor reported a failure"
# As root the memlock line is "CAP_IPC_LOCK: memlock limit does not apply"; else "memlock unlimited".
for want in "verbs would use $RDMA_DEVICE:1 and serve on $GUEST_IP" \
            "RoCE v2 GID with an IPv4 address present on $RDMA_DEVICE:1" \
            "gives RoCE active MTU 4096" "memlock"; do
  grep -F "[ OK ] " "$work/doctor.log" | grep -qF "$want" \
    || fail "doctor did not report OK: $want"
done
[[ -n "${RDMA_GID_INDEX:-}" ]] || fail "no RoCE v2 GID index for $GUEST_IP on $RDMA_DEVICE"
if [[ -n $tos ]]; then
  grep -qF "[INFO] RoCE traffic class: ToS $tos (" "$work/doctor.log" \
    || fail "doctor did not report the RoCE traffic class ToS $tos"
  # Informational: the default's line, or why it cannot be read.
  phase "doctor: $(grep -m1 -E 'device default (ToS )?for' "$work/doctor.log" | cut -c1-200)"
fi
phase "doctor: passed ($RDMA_DEVICE on $GUEST_IP, RoCE v2 GID index $RDMA_GID_INDEX, RoCE MTU 4096, memlock OK)"
touch "$shared/$role.doctor-ok"

# ---- node service: one per guest on verbs, for the second application (NodeServiceRun) ----
# Started now so that its JVM starts while the first application runs; a 10 s lease on the
# driver, so the other host's service lets the application go soon after it ends.
service_socket=
if [[ ${TWO_HOST_NODE_SERVICE:-1} == 1 ]]; then
  service_socket=/run/shuffle-rdma/service.sock
  mkdir -p /run/shuffle-rdma
  phase "node service: starting on verbs ($RDMA_DEVICE, $GUEST_IP)"
  java "${opens[@]}" "${fast_jvm[@]}" -Xmx192m -Dlog4j2.configurationFile="$log_conf" \
    -cp "$here/lib/*" org.apache.spark.shuffle.rdma.service.NodeService \
    --socket "$service_socket" --transport verbs --host "$GUEST_IP" \
    --conf spark.shuffle.rdma.device="$RDMA_DEVICE" \
    --conf spark.shuffle.rdma.service.driverTimeout=10s \
    --conf spark.shuffle.rdma.service.driverProbeInterval=2s > /results/node-service.log 2>&1 &
  service_pid=$!
  pids+=("$service_pid")
fi
# service_ready SECONDS: the service printed its ready line (else the run fails).
service_ready() {
  local end=$(( $(date +%s) + $1 ))
  until grep -q "shuffle-rdma-service ready:" /results/node-service.log 2>/dev/null; do
    kill -0 "$service_pid" 2>/dev/null || fail "the node service exited: $(tail -n 5 /results/node-service.log | cut -c1-300 | paste -sd'|' -)"
    [[ $(date +%s) -lt $end ]] || fail "the node service was not ready within $1 s"
    sleep 2
  done
  phase "node service: $(grep -m1 -o 'shuffle-rdma-service ready:.*transport=[a-z]* address=[^ ]*' /results/node-service.log)"
}
# service_end SECONDS: the service released every output it was handed (by the driver's
# release or its lease on the driver), then stops on SIGTERM; its CPU time and peak memory.
service_end() {
  local end=$(( $(date +%s) + $1 )) released='released app-[^ ]+ \(.*\): [0-9]+ outputs, .*registeredBytes=0 openDescriptors=0 applications=0 outputs=0 handOvers=[1-9]'
  until grep -qE "$released" /results/node-service.log; do
    [[ $(date +%s) -lt $end ]] || fail "node service: the application's outputs were not released within $1 s of its end (results/host-$role/node-service.log)"
    sleep 2
  done
  phase "node service: $(grep -E "$released" /results/node-service.log | tail -n 1 | sed 's/^[^ ]* //' | cut -c1-300)"
  local ticks hwm
  ticks=$(awk '{ print $14 + $15 }' "/proc/$service_pid/stat")
  hwm=$(awk '/^VmHWM/ { print $2 " " $3 }' "/proc/$service_pid/status")
  kill -TERM "$service_pid"
  for _ in $(seq 1 30); do kill -0 "$service_pid" 2>/dev/null || break; sleep 1; done
  grep -q "shuffle-rdma-service stopped" /results/node-service.log || fail "node service: no clean stop on SIGTERM"
  phase "node service: stopped; CPU $(( ticks / $(getconf CLK_TCK) )) s over the whole run, peak RSS $hwm"
}

wait_for() {  # wait_for FILE SECONDS: 0 when FILE appears, 1 on timeout or a peer failure
  local end=$(( $(date +%s) + $2 ))
  while [[ ! -e "$1" ]]; do
    [[ -e "$shared/a.failed" || -e "$shared/b.failed" ]] && return 1
    [[ $(date +%s) -lt $end ]] || return 1
    sleep 2
  done
}

if [[ $role == b ]]; then
  # ---- host b: a worker that joins host a's master (it retries until the master is up) ----
  phase "worker: joining spark://$PEER_IP:7077"
  java "${opens[@]}" "${fast_jvm[@]}" -Xmx256m -Dlog4j2.configurationFile="$log_conf" \
    -cp "$cp" org.apache.spark.deploy.worker.Worker --host "$GUEST_IP" --cores 1 \
    --memory 768m "spark://$PEER_IP:7077" > /results/worker.log 2>&1 &
  worker_pid=$!
  pids+=("$worker_pid")
  tail -n +1 -f --pid="$worker_pid" /results/worker.log 2>/dev/null \
    | grep --line-buffered -E "Successfully registered with master|Asked to launch executor|finished with state" \
    | while IFS= read -r l; do phase "  worker: ${l#* INFO }"; done &
  pids+=($!)
  if [[ -n $service_socket ]]; then
    service_ready 600
    touch "$shared/b.service-ready"
  fi
  wait_for "$shared/a.done" "${TWO_HOST_WAIT:-2400}" || fail "host a did not finish (see its log)"
  kill -0 "$worker_pid" 2>/dev/null || fail "the worker JVM died before host a finished (results/host-b/worker.log)"
  phase "host a done ($(cat "$shared/a.done")); stopping the worker"
  [[ -z $service_socket ]] || service_end 120
  exit 0
fi

# ---- host a: master, worker and driver in one JVM; the executors run on both hosts ----
wait_for "$shared/b.doctor-ok" 900 || fail "host b's doctor did not pass"
kernel=$(uname -r)
major=${kernel%%.*}; rest=${kernel#*.}; minor=${rest%%.*}
# 6.2 and later pin page-cache pages of a read-only shared mapping: no copy expected.
if (( major > 6 || (major == 6 && minor >= 2) )); then export EXPECT_ZERO_PINNED_COPY=1; fi
records=${SPARK_JOB_RECORDS:-40000}
# The sort-shuffle reference, computed on the host by integration-tests/softroce/make-payload (else the
# driver computes it here in local[2], which costs minutes under emulation).
reference="$here/reference/demo-$records-4.txt"
[[ -f $reference ]] && export DEMO_REFERENCE_FILE=$reference
# The other workloads' references and the TPC-DS data and queries (both hosts read them here).
export TWO_HOST_REFERENCE_DIR="$here/reference" TWO_HOST_TPCDS_DIR="$here/tpcds"
workloads=${TWO_HOST_WORKLOADS:-skew,poolpressure,tpcds,blip,cap,fault,kill}
export TWO_HOST_WORKLOADS=$workloads
# The blip workload drops this host's RoCE packets for a while (tc netem on this netdev).
export TWO_HOST_BLIP_NETDEV=${RDMA_NETDEV:-}
if [[ -n $service_socket ]]; then
  # The driver waits for both services only before the second application: their JVMs start
  # (a minute or more under emulation) while the first one runs.
  ( service_ready 900; touch "$shared/a.service-ready" ) &
  export NODE_SERVICE_SOCKET=$service_socket
  export NODE_SERVICE_READY="$shared/a.service-ready:$shared/b.service-ready"
  workloads+=",then a second application with a node service per host"
fi
phase "Spark standalone across $GUEST_IP and $PEER_IP on verbs: demo ($records records), $workloads"
exec_opts="-Dlog4j2.configurationFile=$log_conf ${fast_jvm[*]}"
# The ToS of every verbs connection of the run (the executors get it with the app's conf),
# and a sample of the wire to check it: RoCE v2 is UDP to 4791 in both directions; rxe sends
# it through this NIC (only rxe's loopback, never used across hosts, bypasses it).
tos_conf=()
if [[ -n $tos ]]; then
  command -v tcpdump >/dev/null \
    || fail "tcpdump is not in the guest image (integration-tests/softroce/image/packages.txt)"
  : "${RDMA_NETDEV:?the harness sets RDMA_NETDEV}"
  tos_conf=(-Dspark.shuffle.rdma.verbs.trafficClass="$tos")
  # -t: no timestamps, so each packet is "IP (tos 0x.., ...)" then "    SRC.port > DST.port: UDP".
  tcpdump -i "$RDMA_NETDEV" -nn -v -t -l -c "${TOS_PACKETS:-400}" udp port 4791 \
    > "$work/tos-capture.txt" 2> "$work/tcpdump.err" &
  tcpdump_pid=$!
  pids+=("$tcpdump_pid")
  for _ in $(seq 1 60); do grep -q "listening on" "$work/tcpdump.err" && break; sleep 1; done
  grep -q "listening on" "$work/tcpdump.err" || fail "tcpdump did not start: $(head -c 300 "$work/tcpdump.err")"
  phase "tcpdump on $RDMA_NETDEV: up to ${TOS_PACKETS:-400} RoCE packets, ToS $tos expected"
fi
set +e
java "${opens[@]}" "${fast_jvm[@]}" -Xmx1g -Dlog4j2.configurationFile="$log_conf" \
  "${tos_conf[@]}" \
  -Dspark.executor.extraClassPath="$cp" \
  "-Dspark.executor.extraJavaOptions=$exec_opts" \
  -Dspark.executor.memory=512m \
  -Dspark.shuffle.rdma.transport=verbs \
  -Dspark.shuffle.rdma.device="$RDMA_DEVICE" \
  -Dspark.shuffle.rdma.verbs.receivePoolSize=4m \
  -Dspark.shuffle.rdma.regionSize=4m \
  -Dspark.network.maxRemoteBlockSizeFetchToMem=5m \
  -Dspark.shuffle.io.retryWait=3s \
  -Dspark.shuffle.rdma.verbs.keepaliveInterval=5s \
  -Dspark.shuffle.rdma.maxRegisteredBytes=20m \
  -Dspark.shuffle.readHostLocalDisk=false \
  -Dspark.driver.host="$GUEST_IP" \
  -Dspark.ui.enabled=false \
  -Dspark.network.timeout=600s \
  -Dspark.executor.heartbeatInterval=60s \
  -cp "$cp" org.apache.spark.shuffle.rdma.demo.TwoHostVerbsRun "$GUEST_IP" 2 "$records" 4 2>&1 \
  | while IFS= read -r l; do
      # Failed checks also go to a file: their names become the run's failure reason.
      case "$l" in "== check FAILED "*) echo "${l#== check FAILED }" >> "$work/failed-checks" ;; esac
      case "$l" in
        # Counter dumps go to the log as they are (a phase line costs a process each under
        # emulation); checks, notes and progress become phase lines.
        "== plugin "*|"== executor "*" on "*) echo "$l" ;;
        "== "*) phase "  ${l#== }" ;;
        *"Registering worker"*|*"Registered app"*|*"Launching executor"*|*"Granted executor"*)
          echo "$l"; phase "  ${l#* INFO }" ;;
        *) echo "$l" ;;
      esac
    done
rc=${PIPESTATUS[0]}
set -e
tos_problem=
if [[ -n $tos ]]; then
  kill -INT "$tcpdump_pid" 2>/dev/null || true   # it may have stopped at its count already
  wait "$tcpdump_pid" 2>/dev/null || true
  cp "$work/tos-capture.txt" /results/roce-tos-capture.txt
  want=$(printf '0x%x' "$tos")
  # Per packet: its ToS and the source address (the port is the last dotted field).
  awk '/^IP \(tos 0x[0-9a-f]+/ { match($0, /tos 0x[0-9a-f]+/); t = substr($0, RSTART + 4, RLENGTH - 4)
         if ((getline nxt) > 0) { split(nxt, f, " "); src = f[1]; sub(/\.[0-9]+$/, "", src); print t, src } }' \
    "$work/tos-capture.txt" | sort | uniq -c > "$work/tos-summary.txt"
  while read -r n t src; do phase "  RoCE packets from $src with tos $t: $n"; done < "$work/tos-summary.txt"
  total=$(awk '{ s += $1 } END { print s + 0 }' "$work/tos-summary.txt")
  other=$(awk -v w="$want" '$2 != w { s += $1 } END { print s + 0 }' "$work/tos-summary.txt")
  from_a=$(awk -v w="$want" -v ip="$GUEST_IP" '$2 == w && $3 == ip { s += $1 } END { print s + 0 }' "$work/tos-summary.txt")
  from_b=$(awk -v w="$want" -v ip="$PEER_IP" '$2 == w && $3 == ip { s += $1 } END { print s + 0 }' "$work/tos-summary.txt")
  if (( total < 20 )); then
    tos_problem="only $total RoCE packets captured on $RDMA_NETDEV (want at least 20)"
  elif (( other > 0 )); then
    tos_problem="$other of $total RoCE packets without tos $want (results/host-a/roce-tos-capture.txt)"
  elif (( from_a == 0 || from_b == 0 )); then
    tos_problem="tos $want seen from $GUEST_IP $from_a times and from $PEER_IP $from_b times (want both)"
  else
    phase "traffic class: all $total RoCE packets carried tos $want (ToS $tos), $from_a from $GUEST_IP, $from_b from $PEER_IP"
  fi
fi
echo "exit $rc" > "$shared/a.done"
if [[ $rc -ne 0 ]]; then
  # The reason names each failed check (cut to its name), so the harness's last line says it.
  why=$(cut -d: -f1-2 "$work/failed-checks" 2>/dev/null | paste -sd';' - | cut -c1-600)
  fail "TwoHostVerbsRun exited $rc${why:+; failed checks: $why}"
fi
[[ -z $tos_problem ]] || fail "traffic class: $tos_problem"
[[ -z $service_socket ]] || service_end 60
phase "two-host run on verbs passed"
