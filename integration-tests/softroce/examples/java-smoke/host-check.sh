#!/bin/bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Host side of the java-smoke example: run by integration-tests/softroce/run
# after the guest passed, with cwd = the payload dir. Checks the file the guest
# wrote back through 9p.
set -euo pipefail
f=out/result.txt
[ -f "$f" ] || { echo "host-check: $f missing"; exit 1; }
if [ -n "${SOFTROCE_RUN_STARTED:-}" ] && [ "$(stat -c %Y "$f")" -lt "$SOFTROCE_RUN_STARTED" ]; then
  echo "host-check: $f is older than this run"; exit 1
fi
want=$(sha256sum input.txt | cut -d' ' -f1)
grep -qx "input_sha256=$want" "$f" || { echo "host-check: input.txt hash mismatch"; exit 1; }
grep -qx 'java_spec=17' "$f" || { echo "host-check: guest JVM is not Java 17"; exit 1; }
grep -qx 'verdict=PASS' "$f" || { echo "host-check: no PASS verdict"; exit 1; }
echo "host-check: round trip OK ($(grep java_version_ms "$f"))"
