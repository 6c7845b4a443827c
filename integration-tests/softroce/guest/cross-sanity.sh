#!/bin/bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Cross-host RDMA checks of a two-guest run, after each guest's loopback sanity.sh: the
# guest with role b serves, the guest with role a connects to it over the wire between them.
#   1. rping (rdma_cm) from a to b, -C 3
#   2. ib_read_bw -R: a's QP READs from b's memory, 64 KiB x 500
# Logs go to /results/sanity/cross-*. Exit status 0 only if both pass on this side.
# Needs RDMA_DEVICE, GUEST_IP, PEER_IP and SOFTROCE_ROLE in the environment.
set -u
DEV=${RDMA_DEVICE:?}
IP=${GUEST_IP:?}
PEER=${PEER_IP:?}
ROLE=${SOFTROCE_ROLE:?}
OUT=${SOFTROCE_RESULTS_DIR:-/results}/sanity
BW_SIZE=${SOFTROCE_BW_SIZE:-65536}
BW_ITERS=${SOFTROCE_BW_ITERS:-500}
# The other guest boots at about the same time, but under emulation either can lag.
WAIT_S=${SOFTROCE_CROSS_WAIT:-300}
mkdir -p "$OUT"
phase() { echo "@@softroce@@ $*"; }
bw=(ib_read_bw -d "$DEV" -R -F -s "$BW_SIZE" -n "$BW_ITERS")

# Client side: retry until the other guest's server answers or WAIT_S passes.
until_connected() {  # until_connected LOG CMD...
  local log=$1 end=$(( $(date +%s) + WAIT_S )); shift
  while [ "$(date +%s)" -lt "$end" ]; do
    timeout 120 "$@" > "$log" 2>&1 && return 0
    sleep 1
  done
  return 1
}

if [ "$ROLE" = b ]; then
  timeout "$WAIT_S" rping -s -a "$IP" -C 3 -v > "$OUT/cross-rping-server.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || { phase "cross: rping server on $IP FAILED (exit $rc)"; exit 1; }
  phase "cross: rping server on $IP: peer $PEER pinged"
  timeout "$WAIT_S" "${bw[@]}" > "$OUT/cross-ib_read_bw-server.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || { phase "cross: ib_read_bw server on $IP FAILED (exit $rc)"; exit 1; }
  phase "cross: ib_read_bw server on $IP: peer $PEER read its memory"
  exit 0
fi

if ! until_connected "$OUT/cross-rping-client.log" rping -c -a "$PEER" -C 3 -v; then
  phase "cross: rping $IP -> $PEER FAILED"; tail -n 5 "$OUT/cross-rping-client.log"; exit 1
fi
pings=$(grep -c 'ping data' "$OUT/cross-rping-client.log")
[ "$pings" -eq 3 ] || { phase "cross: rping $IP -> $PEER: $pings/3 pings"; exit 1; }
phase "cross: rping $IP -> $PEER over the wire: 3/3 pings"
# The server side restarts as ib_read_bw after rping: give it a moment before the first try.
sleep 2
if ! until_connected "$OUT/cross-ib_read_bw-client.log" "${bw[@]}" "$PEER"; then
  phase "cross: ib_read_bw $IP -> $PEER FAILED"; tail -n 5 "$OUT/cross-ib_read_bw-client.log"; exit 1
fi
row=$(awk -v s="$BW_SIZE" '$1 == s && NF >= 5 {print; exit}' "$OUT/cross-ib_read_bw-client.log")
[ -n "$row" ] || { phase "cross: ib_read_bw $IP -> $PEER: no result row"; exit 1; }
read -r bytes iters peak avg rate <<<"$row"
phase "cross: ib_read_bw -R $IP READs from $PEER: ${bytes} B x ${iters}: average ${avg} MB/sec (peak ${peak})"
echo "$avg" > "$OUT/cross-ib_read_bw.avg_MBps"
exit 0
