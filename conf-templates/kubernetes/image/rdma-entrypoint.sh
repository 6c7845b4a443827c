#!/bin/sh
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
#
# Entrypoint of the spark-shuffle-rdma image (conf-templates/kubernetes/image/Dockerfile,
# docs/kubernetes.md section 3). The apache/spark images run Spark as uid 185. Kubernetes
# gives a non-root process no ambient capabilities, so IPC_LOCK added in the pod spec is in
# the container's bounding set but not in the JVM's effective set, and the runtime's 8 MiB
# memlock limit stays: the verbs preflight fails and transport=auto runs tcp. This script
# runs as root (the image's USER), and before it becomes the Spark user:
#   1. raises RLIMIT_MEMLOCK to SHUFFLE_RDMA_MEMLOCK (KiB or "unlimited", as `ulimit -l`
#      takes it). Raising the hard limit needs CAP_SYS_RESOURCE, which containers do not get
#      by default; without it the soft limit goes up to the hard limit and the next step is
#      what makes pinning work;
#   2. keeps CAP_IPC_LOCK as an ambient capability when the container has it (the pod spec's
#      capabilities.add: ["IPC_LOCK"]), so the Spark user's JVM has it effective and the
#      memlock limit does not apply to it;
#   3. becomes SPARK_UID:SPARK_GID with setpriv (util-linux; resource limits survive the uid
#      change) and execs Spark's own entrypoint (SPARK_ENTRYPOINT, /opt/entrypoint.sh) with
#      the container's arguments (driver, executor, or any command).
# Run as non-root (runAsUser set in the pod) it changes nothing and says so.
set -eu

memlock=${SHUFFLE_RDMA_MEMLOCK:-unlimited}
uid=${SPARK_UID:-185}
gid=${SPARK_GID:-$uid}
next=${SPARK_ENTRYPOINT:-/opt/entrypoint.sh}
CAP_IPC_LOCK=14

say() { echo "rdma-entrypoint: $*" >&2; }

# Bit CAP_IPC_LOCK of a capability set of this shell (CapEff, CapBnd, ...) from /proc.
has_ipc_lock() {
  hex=$(sed -n "s/^$1:[[:space:]]*//p" /proc/self/status)
  [ -n "$hex" ] && [ $(( (0x$hex >> CAP_IPC_LOCK) & 1 )) -eq 1 ]
}

if [ "$(id -u)" != 0 ]; then
  say "running as uid $(id -u), not root: memlock stays $(ulimit -l) KiB and no capability" \
    "can be kept for Spark (run the container as the image's root USER: no runAsUser or" \
    "runAsNonRoot in the pod); the rdma-doctor init container says what verbs gets"
  exec "$next" "$@"
fi

if ulimit -l "$memlock" 2>/dev/null; then
  limit="memlock $(ulimit -l)"
else
  hard=$(ulimit -H -l)
  ulimit -S -l "$hard"
  limit="memlock $hard (hard limit; raising it to $memlock needs CAP_SYS_RESOURCE)"
fi

set -- -- "$next" "$@"
if has_ipc_lock CapEff; then
  set -- --inh-caps=+ipc_lock --ambient-caps=+ipc_lock "$@"
  caps="CAP_IPC_LOCK kept (ambient)"
else
  caps="no CAP_IPC_LOCK in this container (add IPC_LOCK to the pod spec's capabilities)"
fi

if entry=$(getent passwd "$uid"); then
  set -- --init-groups "$@"
  home=$(echo "$entry" | cut -d: -f6)
  [ -n "$home" ] && export HOME="$home"
else
  set -- --clear-groups "$@"
fi

say "$limit, $caps, running $next as uid $uid gid $gid"
exec setpriv --reuid "$uid" --regid "$gid" "$@"
