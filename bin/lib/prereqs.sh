# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Prerequisites of bin/run-demo and bin/run-tests, sourced by both.
#   prereqs demo|tests
# Always needed: a JDK 17+ (javac) and Maven 3.8+; the scripts cannot fetch those without a
# package manager, so they stop naming the package. Needed for the verbs transport's native
# layer: gcc, make and the rdma-core headers (libibverbs-dev, librdmacm-dev). Needed by the
# tests only: unzip (jar checks in bin/build-all-lines), ip and tc (iproute2, the benchmark
# smoke's network namespaces), jq and git (bin/release: the SBOMs, the release notes); the
# Soft-RoCE VM harness installs qemu and debootstrap itself.
# As root with apt-get, whatever is missing is installed (and said so). Without root:
#   demo   builds without the native layer (SHUFFLE_RDMA_NATIVE=skip): the jar runs on tcp,
#          which transport=auto picks; one line says how to get verbs.
#   tests  stops with the apt-get line to run (the native layer's tests need the headers).
# SHUFFLE_RDMA_NATIVE=skip set by the caller forces the build without the native layer.

prereq_missing=()

# The JDK package of this distribution (17 or newer): openjdk-17-jdk-headless on Debian 12
# and Ubuntu 22.04/24.04; Debian 13 has no 17, its JDK is openjdk-21-jdk-headless. Needs the
# package lists (after apt-get update); without them it answers the 17 package.
jdk_package() {
  local p out
  for p in openjdk-17-jdk-headless openjdk-21-jdk-headless openjdk-25-jdk-headless; do
    # (output captured first: grep -q closing the pipe would fail apt-cache under pipefail)
    if out=$(apt-cache show "$p" 2>/dev/null) && grep -q '^Package: ' <<<"$out"; then
      echo "$p"
      return
    fi
  done
  echo openjdk-17-jdk-headless
}

_prereq_need() {  # _prereq_need PACKAGE TEST...: records PACKAGE when the test fails
  local pkg=$1; shift
  "$@" >/dev/null 2>&1 || prereq_missing+=("$pkg")
}

_prereq_scan() {  # fills prereq_missing with the Debian packages this host lacks
  local what=$1
  prereq_missing=()
  _prereq_need openjdk-17-jdk-headless command -v javac
  _prereq_need maven command -v mvn
  if [ "${SHUFFLE_RDMA_NATIVE:-}" != skip ]; then
    _prereq_need gcc command -v gcc
    _prereq_need make command -v make
    _prereq_need libibverbs-dev test -f /usr/include/infiniband/verbs.h
    _prereq_need librdmacm-dev test -f /usr/include/rdma/rdma_cma.h
  fi
  if [ "$what" = tests ]; then
    _prereq_need unzip command -v unzip
    _prereq_need iproute2 command -v tc
    _prereq_need jq command -v jq
    _prereq_need git command -v git
  fi
}

_prereq_can_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

prereqs() {
  local what=$1
  _prereq_scan "$what"
  if [ ${#prereq_missing[@]} -gt 0 ]; then
    if _prereq_can_install; then
      echo "[$what] installing with apt-get: ${prereq_missing[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      local jdk
      jdk=$(jdk_package)
      apt-get install -y -qq --no-install-recommends \
        "${prereq_missing[@]/#openjdk-17-jdk-headless/$jdk}" >/dev/null
      _prereq_scan "$what"
      if [ ${#prereq_missing[@]} -gt 0 ]; then
        echo "[$what] still missing after apt-get install: ${prereq_missing[*]}" >&2
        return 1
      fi
    else
      _prereq_without_root "$what" || return 1
    fi
  fi
  if [ "${SHUFFLE_RDMA_NATIVE:-}" = skip ]; then
    echo "[$what] verbs is unavailable in this build (${prereq_skip_reason:-SHUFFLE_RDMA_NATIVE=skip}):" \
      "the jar runs on tcp. For verbs: apt-get install -y gcc make libibverbs-dev librdmacm-dev," \
      "or run this script as root"
  fi
}

_prereq_without_root() {
  local what=$1 native=() other=() p
  for p in "${prereq_missing[@]}"; do
    case "$p" in gcc|make|libibverbs-dev|librdmacm-dev) native+=("$p") ;; *) other+=("$p") ;; esac
  done
  if [ ${#other[@]} -gt 0 ]; then
    local jdk
    jdk=$(jdk_package)
    echo "[$what] missing: ${other[*]/#openjdk-17-jdk-headless/$jdk}; install them" \
      "(apt-get install -y ${prereq_missing[*]/#openjdk-17-jdk-headless/$jdk})" \
      "or run this script as root on a Debian/Ubuntu machine" >&2
    return 1
  fi
  if [ "$what" = tests ]; then
    echo "[$what] the native layer's tests need ${native[*]}: apt-get install -y ${native[*]}" \
      "(or run bin/run-tests as root)" >&2
    return 1
  fi
  # The demo without root: the tcp transport needs none of it. Maven's native-skip-env
  # profile builds the jar without the native layer.
  export SHUFFLE_RDMA_NATIVE=skip
  prereq_skip_reason="no ${native[*]}, and not root to install them"
}
