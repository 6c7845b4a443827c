#!/bin/bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Soft-RoCE guest init (PID 1, exec'd by /sbin/softroce-init from the 9p
# "harness" share). Sets the guest up, brings up rxe0, runs the sanity checks
# and the payload, prints the end marker and powers off.
#
# Kernel command line parameters (set by ../run):
#   softroce.token=T            printed in the end marker (guards stale logs)
#   softroce.payload=0|1        whether a 9p "payload" share is attached
#   softroce.payload_timeout=S  guest-side limit for guest-test.sh
#   softroce.ip=A.B.C.D/N       guest address (slirp default 10.0.2.15/24)
#   softroce.gw=A.B.C.D|none     default route (slirp default 10.0.2.2)
#   softroce.hostname=NAME
#   softroce.hosts=IP=NAME,...   more /etc/hosts entries (the other hosts of a multi-host run)
#   softroce.mtu=N              MTU of the NIC, set before rxe0 is created (default: as booted)
#   softroce.role=a|b           multi-host run: this guest's role (cross-host sanity checks)
#   softroce.peer=A.B.C.D       multi-host run: the other guest's address
#   softroce.script=NAME        payload script to run (default guest-test.sh)
#   softroce.shared=0|1         whether a 9p "shared" share (both guests, read-write) is attached
# Lines starting "@@softroce@@ " are picked up by the host and shown as progress.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
HARNESS=/run/softroce/harness

TOKEN=none PAYLOAD=0 PAYLOAD_TIMEOUT=1200 IP_CIDR=10.0.2.15/24 GW=10.0.2.2
GUEST_HOSTNAME=softroce-guest EXTRA_HOSTS="" MTU="" ROLE="" PEER_IP="" SCRIPT=guest-test.sh SHARED=0
read -r -a cmdline < /proc/cmdline
for arg in "${cmdline[@]}"; do
  case "$arg" in
    softroce.token=*)           TOKEN=${arg#*=} ;;
    softroce.payload=*)         PAYLOAD=${arg#*=} ;;
    softroce.payload_timeout=*) PAYLOAD_TIMEOUT=${arg#*=} ;;
    softroce.ip=*)              IP_CIDR=${arg#*=} ;;
    softroce.gw=*)              GW=${arg#*=} ;;
    softroce.hostname=*)        GUEST_HOSTNAME=${arg#*=} ;;
    softroce.hosts=*)           EXTRA_HOSTS=${arg#*=} ;;
    softroce.mtu=*)             MTU=${arg#*=} ;;
    softroce.role=*)            ROLE=${arg#*=} ;;
    softroce.peer=*)            PEER_IP=${arg#*=} ;;
    softroce.script=*)          SCRIPT=${arg#*=} ;;
    softroce.shared=*)          SHARED=${arg#*=} ;;
  esac
done
GUEST_IP=${IP_CIDR%/*}

uptime_s() { cut -d' ' -f1 /proc/uptime; }
phase() { echo "@@softroce@@ $* (guest uptime $(uptime_s)s)"; }

finish() {  # finish PASS|FAIL reason
  local verdict=$1; shift
  phase "end: $verdict${*:+ ($*)}"
  echo "SOFTROCE-END $TOKEN $verdict $*"
  sync
  mountpoint -q /payload && umount /payload
  mountpoint -q /results && umount /results
  mountpoint -q /shared && umount /shared
  sync
  echo o > /proc/sysrq-trigger
  sleep 60
  exit 1   # not reached; PID 1 exiting panics and (panic=-1, -no-reboot) stops qemu
}

mnt() {  # mnt TYPE TARGET OPTIONS [SOURCE]
  mkdir -p "$2"
  mountpoint -q "$2" || mount -t "$1" -o "$3" "${4:-$1}" "$2"
}

phase "init: started"

# --- filesystems ---
mnt proc     /proc    nosuid,nodev,noexec
mnt sysfs    /sys     nosuid,nodev,noexec
mnt devtmpfs /dev     mode=0755,nosuid
mnt devpts   /dev/pts gid=5,mode=620,ptmxmode=666,nosuid,noexec
mnt tmpfs    /dev/shm mode=1777,nosuid,nodev
mnt tmpfs    /run     mode=0755,nosuid,nodev
mnt tmpfs    /tmp     mode=1777,nosuid,nodev
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mnt 9p /results trans=virtio,version=9p2000.L,msize=262144 results \
  || finish FAIL "cannot mount the 9p results share"
if [ "$PAYLOAD" = 1 ]; then
  mnt 9p /payload trans=virtio,version=9p2000.L,msize=262144 payload \
    || finish FAIL "cannot mount the 9p payload share"
fi
if [ "$SHARED" = 1 ]; then
  mnt 9p /shared trans=virtio,version=9p2000.L,msize=262144 shared \
    || finish FAIL "cannot mount the 9p shared share"
fi

# --- hostname; Spark needs it to resolve to the guest's address ---
hostname "$GUEST_HOSTNAME"
printf '127.0.0.1\tlocalhost\n%s\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
  "$GUEST_IP" "$GUEST_HOSTNAME" > /etc/hosts
for h in ${EXTRA_HOSTS//,/ }; do
  printf '%s\t%s\n' "${h%%=*}" "${h#*=}" >> /etc/hosts
done
# No DNS server is reachable: resolve from /etc/hosts only, or every lookup
# that misses (e.g. an IPv6 lookup of the hostname) waits ~10 s for DNS timeouts.
sed -i -e 's/^hosts:.*/hosts:          files/' -e 's/^networks:.*/networks:       files/' /etc/nsswitch.conf
: > /etc/resolv.conf

# --- limits: RDMA registers (pins) memory ---
ulimit -l unlimited
ulimit -n 65536
echo 1 > /proc/sys/kernel/sysrq

# --- network ---
ip link set lo up
modprobe virtio_net 2>/dev/null
NIC=""
for _ in $(seq 1 100); do
  for d in /sys/class/net/*; do
    n=${d##*/}
    [ "$n" = lo ] && continue
    [ -e "$d/device" ] && { NIC=$n; break; }
  done
  [ -n "$NIC" ] && break
  sleep 0.1
done
[ -n "$NIC" ] || finish FAIL "no network interface found"
ip addr add "$IP_CIDR" dev "$NIC" || finish FAIL "ip addr add $IP_CIDR dev $NIC failed"
if [ -n "$MTU" ]; then
  ip link set "$NIC" mtu "$MTU" || finish FAIL "ip link set $NIC mtu $MTU failed"
fi
ip link set "$NIC" up || finish FAIL "ip link set $NIC up failed"
[ "$GW" = none ] || ip route add default via "$GW" dev "$NIC" 2>/dev/null || true
phase "network: $NIC $IP_CIDR mtu $(cat /sys/class/net/$NIC/mtu), hostname $GUEST_HOSTNAME${PEER_IP:+, peer $PEER_IP}"

# --- Soft-RoCE ---
modprobe rdma_rxe || finish FAIL "modprobe rdma_rxe failed"
modprobe rdma_ucm || finish FAIL "modprobe rdma_ucm failed"
modprobe ib_uverbs 2>/dev/null
rdma link add rxe0 type rxe netdev "$NIC" || finish FAIL "rdma link add rxe0 failed"
state=""
for _ in $(seq 1 600); do
  state=$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)
  case "$state" in *ACTIVE*) break ;; esac
  sleep 0.1
done
case "$state" in *ACTIVE*) ;; *) rdma link show; finish FAIL "rxe0 port not ACTIVE after 60 s (state: $state)" ;; esac
phase "rxe0 ACTIVE on $NIC"

# RoCE v2 GID of the IPv4 address (::ffff:a.b.c.d), for verbs-level payloads.
GID_INDEX=""
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${GUEST_IP//./ })
for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
  [ "$(cat "$g" 2>/dev/null)" = "$want" ] && { GID_INDEX=${g##*/}; break; }
done

export RDMA_DEVICE=rxe0 RDMA_PORT=1 RDMA_GID_INDEX=$GID_INDEX RDMA_NETDEV=$NIC
export GUEST_IP GUEST_HOSTNAME
export SOFTROCE_ROLE=$ROLE PEER_IP
[ "$SHARED" = 1 ] && export SOFTROCE_SHARED_DIR=/shared
# The image's only JDK (17 on bookworm, 21 on trixie).
JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
export JAVA_HOME
export SOFTROCE_GUEST=1 SOFTROCE_RESULTS_DIR=/results

{
  echo "uname=$(uname -r)"
  echo "nproc=$(nproc)"
  echo "mem_total_kb=$(awk '/^MemTotal/{print $2}' /proc/meminfo)"
  echo "nic=$NIC"
  echo "guest_ip=$GUEST_IP"
  echo "hostname=$GUEST_HOSTNAME"
  echo "rdma_device=rxe0"
  echo "gid_index=$GID_INDEX"
  echo "active_mtu=$(ibv_devinfo -d rxe0 2>/dev/null | awk '/active_mtu/ {print $2; exit}')"
  echo "role=$ROLE"
  echo "peer_ip=$PEER_IP"
  echo "java_home=$JAVA_HOME"
} > /results/guest-env.txt

# --- sanity checks (always, before the payload) ---
if ! "$HARNESS/sanity.sh"; then
  finish FAIL "sanity checks failed (see sanity/ in the results dir)"
fi
if [ -n "$ROLE" ] && [ -n "$PEER_IP" ]; then
  if ! "$HARNESS/cross-sanity.sh"; then
    finish FAIL "cross-host RDMA checks with $PEER_IP failed (see sanity/ in the results dir)"
  fi
fi

# --- payload ---
if [ "$PAYLOAD" = 1 ]; then
  if [ -x "/payload/$SCRIPT" ]; then
    phase "payload: running $SCRIPT (limit ${PAYLOAD_TIMEOUT}s)"
    export PAYLOAD_DIR=/payload
    cd /payload
    t0=$(uptime_s)
    timeout -k 10 "$PAYLOAD_TIMEOUT" "./$SCRIPT" 2>&1 | tee /results/payload.log
    rc=${PIPESTATUS[0]}
    cd /
    t1=$(uptime_s)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    if [ "$rc" -eq 0 ]; then
      phase "payload: $SCRIPT passed in ${secs}s"
    else
      [ "$rc" -eq 124 ] && phase "payload: $SCRIPT timed out after ${PAYLOAD_TIMEOUT}s"
      finish FAIL "$SCRIPT exited $rc after ${secs}s"
    fi
  else
    phase "payload: no executable $SCRIPT in the payload dir; sanity checks only"
  fi
fi

finish PASS
