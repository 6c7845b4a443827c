#!/bin/bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Example Soft-RoCE payload: proves a Java 17 JVM runs in the guest and that the
# payload dir round-trips files (host -> guest: input.txt, guest -> host: out/).
# Runs in the guest with cwd = the payload dir; env from the harness:
# RDMA_DEVICE, GUEST_IP, GUEST_HOSTNAME, RDMA_GID_INDEX, JAVA_HOME, PAYLOAD_DIR.
set -euo pipefail
rm -rf out
mkdir -p out

echo "java-smoke: RDMA_DEVICE=$RDMA_DEVICE GUEST_IP=$GUEST_IP GUEST_HOSTNAME=$GUEST_HOSTNAME JAVA_HOME=$JAVA_HOME"

start=$(date +%s%N)
java -XshowSettings:properties -version > out/java.txt 2>&1
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -E 'java.specification.version|java.vm.name|java.runtime.version|os.arch' out/java.txt
grep -q 'java.specification.version = 17' out/java.txt || { echo "not a Java 17 JVM"; exit 1; }

# The JVM must resolve the hostname to the guest's address (Spark relies on it).
getent hosts "$GUEST_HOSTNAME" | grep -qw "$GUEST_IP" || { echo "$GUEST_HOSTNAME does not resolve to $GUEST_IP"; exit 1; }

{
  echo "input_sha256=$(sha256sum input.txt | cut -d' ' -f1)"
  echo "java_version_ms=$ms"
  echo "java_spec=$(sed -n 's/^ *java.specification.version = //p' out/java.txt)"
  echo "guest_kernel=$(uname -r)"
  echo "guest_ip=$GUEST_IP"
  echo "rdma_device=$RDMA_DEVICE"
  echo "verdict=PASS"
} > out/result.txt
cat out/result.txt
