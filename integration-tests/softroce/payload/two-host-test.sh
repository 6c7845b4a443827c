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
#   host a: TwoHostVerbsRun: master + worker + driver in one JVM; on verbs with one executor
#           per host, one application: the demo job, the skewed job (SkewDemo), three TPC-DS
#           queries, a fault (one executor's registrations revoked between stages), each result
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

# ---- doctor: must pass and name what the run depends on ----
phase "doctor on $(hostname) ($GUEST_IP, kernel $(uname -r), GID index ${RDMA_GID_INDEX:-none})"
set +e
java "${fast_jvm[@]}" -jar "$here/lib/shuffle-rdma.jar" doctor > "$work/doctor.log" 2>&1
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
phase "doctor: passed ($RDMA_DEVICE on $GUEST_IP, RoCE v2 GID index $RDMA_GID_INDEX, RoCE MTU 4096, memlock OK)"
touch "$shared/$role.doctor-ok"

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
  pids+=($!)
  tail -n +1 -f --pid="${pids[0]}" /results/worker.log 2>/dev/null \
    | grep --line-buffered -E "Successfully registered with master|Asked to launch executor|finished with state" \
    | while IFS= read -r l; do phase "  worker: ${l#* INFO }"; done &
  pids+=($!)
  wait_for "$shared/a.done" "${TWO_HOST_WAIT:-2400}" || fail "host a did not finish (see its log)"
  kill -0 "${pids[0]}" 2>/dev/null || fail "the worker JVM died before host a finished (results/host-b/worker.log)"
  phase "host a done ($(cat "$shared/a.done")); stopping the worker"
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
workloads=${TWO_HOST_WORKLOADS:-skew,poolpressure,tpcds,fault}
export TWO_HOST_WORKLOADS=$workloads
phase "Spark standalone across $GUEST_IP and $PEER_IP on verbs: demo ($records records), $workloads"
exec_opts="-Dlog4j2.configurationFile=$log_conf ${fast_jvm[*]}"
set +e
java "${opens[@]}" "${fast_jvm[@]}" -Xmx1g -Dlog4j2.configurationFile="$log_conf" \
  -Dspark.executor.extraClassPath="$cp" \
  "-Dspark.executor.extraJavaOptions=$exec_opts" \
  -Dspark.executor.memory=512m \
  -Dspark.shuffle.rdma.transport=verbs \
  -Dspark.shuffle.rdma.device="$RDMA_DEVICE" \
  -Dspark.shuffle.rdma.verbs.receivePoolSize=4m \
  -Dspark.shuffle.rdma.regionSize=4m \
  -Dspark.network.maxRemoteBlockSizeFetchToMem=2m \
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
echo "exit $rc" > "$shared/a.done"
if [[ $rc -ne 0 ]]; then
  # The reason names each failed check (cut to its name), so the harness's last line says it.
  why=$(cut -d: -f1-2 "$work/failed-checks" 2>/dev/null | paste -sd';' - | cut -c1-600)
  fail "TwoHostVerbsRun exited $rc${why:+; failed checks: $why}"
fi
phase "two-host run on verbs passed"
