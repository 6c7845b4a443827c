#!/usr/bin/env bash
# Runs inside the Soft-RoCE guest (Debian bookworm, openjdk-17-jre-headless, rdma-core,
# rxe0 ACTIVE). Env: RDMA_DEVICE (e.g. rxe0), GUEST_IP (the IPv4 of rxe0's netdev).
# Payload layout: this script, lib/*.jar (shuffle-rdma.jar + Spark runtime jars).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GUEST_IP:?GUEST_IP must be set}"
: "${RDMA_DEVICE:=rxe0}"
export RDMA_DEVICE
ulimit -l unlimited 2>/dev/null || echo "note: could not raise memlock ($(ulimit -l)); registration may fail"

java_opts=(--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
           --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
           -Xmx1g)
cp="$here/lib/*"
main=org.apache.spark.shuffle.rdma.transport.verbs.VerbsSelfTest
work="$(mktemp -d)"
trap 'rm -rf "$work"; [[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null || true' EXIT

echo "== doctor"
java -jar "$here/lib/shuffle-rdma.jar" doctor || { echo "doctor reports verbs cannot run"; exit 1; }

echo "== verbs self-test: server and client on $GUEST_IP ($RDMA_DEVICE)"
java "${java_opts[@]}" -cp "$cp" "$main" server "$GUEST_IP" 47470 "$work" > "$work/server.log" 2>&1 &
server_pid=$!
status=0
timeout 600 java "${java_opts[@]}" -cp "$cp" "$main" client "$GUEST_IP" "$work" || status=$?
wait "$server_pid" || status=$((status == 0 ? 1 : status))
server_pid=
echo "== server log"; tail -n 50 "$work/server.log"
exit "$status"
