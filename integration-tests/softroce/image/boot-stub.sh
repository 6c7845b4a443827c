#!/bin/sh
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# PID 1 of the Soft-RoCE guest, baked into the image as /sbin/softroce-init.
#
# Deliberately tiny and stable (it is part of the image cache key): it mounts
# the harness's guest/ folder, shared read-only by 9p with tag "harness", and
# execs guest/init.sh from there, so edits to the real init need no rebuild.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run 2>/dev/null
mkdir -p /run/softroce/harness

modprobe 9pnet_virtio 2>/dev/null
modprobe 9p 2>/dev/null
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro harness /run/softroce/harness \
   && [ -x /run/softroce/harness/init.sh ]; then
  exec /run/softroce/harness/init.sh "$@"
fi

token=none
for arg in $(cat /proc/cmdline); do
  case "$arg" in softroce.token=*) token=${arg#softroce.token=} ;; esac
done
echo "softroce-init: cannot mount the 9p harness share or find init.sh in it"
echo "SOFTROCE-END $token FAIL boot-stub"
sync
echo o > /proc/sysrq-trigger
sleep 60
