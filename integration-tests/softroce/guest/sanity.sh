#!/bin/bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Soft-RoCE sanity checks, run by init.sh in the guest before any payload:
#   1. ibv_devinfo -d rxe0 reports PORT_ACTIVE
#   2. rping loopback: server + client (-C 3) against the guest's own IP
#   3. ib_read_bw -R loopback (rdma_cm): server + client, prints bandwidth
# Logs go to /results/sanity/. Exit status 0 only if all three pass.
# Needs RDMA_DEVICE and GUEST_IP in the environment. Also runs unchanged on a
# host with a real RDMA NIC (set RDMA_DEVICE, GUEST_IP, SOFTROCE_RESULTS_DIR).
set -u
DEV=${RDMA_DEVICE:?}
IP=${GUEST_IP:?}
OUT=${SOFTROCE_RESULTS_DIR:-/results}/sanity
BW_SIZE=${SOFTROCE_BW_SIZE:-65536}
BW_ITERS=${SOFTROCE_BW_ITERS:-500}
mkdir -p "$OUT"
phase() { echo "@@softroce@@ $*"; }
fail=0

# 1. device and port
ibv_devinfo -d "$DEV" > "$OUT/ibv_devinfo.log" 2>&1
cat "$OUT/ibv_devinfo.log"
if grep -q 'state:.*PORT_ACTIVE' "$OUT/ibv_devinfo.log"; then
  phase "sanity: ibv_devinfo -d $DEV: $(grep -m1 'state:' "$OUT/ibv_devinfo.log" | xargs), $(grep -m1 'active_mtu:' "$OUT/ibv_devinfo.log" | xargs)"
else
  phase "sanity: ibv_devinfo -d $DEV: port not PORT_ACTIVE"; fail=1
fi

# The client may start before the server listens; retry until it connects.
retry_client() {  # retry_client SERVER_PID LOG CMD...
  local spid=$1 log=$2; shift 2
  for _ in $(seq 1 20); do
    if timeout 120 "$@" > "$log" 2>&1; then return 0; fi
    kill -0 "$spid" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

# 2. rping loopback
timeout 120 rping -s -a "$IP" -C 3 -v > "$OUT/rping-server.log" 2>&1 &
spid=$!
sleep 0.5
if retry_client "$spid" "$OUT/rping-client.log" rping -c -a "$IP" -C 3 -v; then
  wait "$spid"; src=$?
else
  kill "$spid" 2>/dev/null; wait "$spid"; src=1
fi
cat "$OUT/rping-client.log"
pings=$(grep -c 'ping data' "$OUT/rping-client.log")
if [ "$src" -eq 0 ] && [ "$pings" -eq 3 ]; then
  phase "sanity: rping -C 3 loopback to $IP: $pings/3 pings"
else
  phase "sanity: rping loopback FAILED ($pings/3 pings, server exit $src)"; fail=1
fi

# 3. ib_read_bw over rdma_cm, loopback
bw=(ib_read_bw -d "$DEV" -R -F -s "$BW_SIZE" -n "$BW_ITERS")
timeout 180 "${bw[@]}" > "$OUT/ib_read_bw-server.log" 2>&1 &
spid=$!
sleep 0.5
if retry_client "$spid" "$OUT/ib_read_bw-client.log" "${bw[@]}" "$IP"; then
  wait "$spid"; src=$?
else
  kill "$spid" 2>/dev/null; wait "$spid"; src=1
fi
cat "$OUT/ib_read_bw-client.log"
# Result row: #bytes #iterations BW-peak BW-average MsgRate (MB/sec)
row=$(awk -v s="$BW_SIZE" '$1 == s && NF >= 5 {print; exit}' "$OUT/ib_read_bw-client.log")
if [ "$src" -eq 0 ] && [ -n "$row" ]; then
  read -r bytes iters peak avg rate <<<"$row"
  phase "sanity: ib_read_bw -R loopback: ${bytes} B x ${iters}: average ${avg} MB/sec (peak ${peak}), ${rate} Mpps"
  echo "$avg" > "$OUT/ib_read_bw.avg_MBps"
else
  phase "sanity: ib_read_bw -R loopback FAILED (server exit $src)"; fail=1
fi

exit $fail
