#!/usr/bin/env bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Builds the Soft-RoCE guest image into OUT_DIR (which must be new and empty):
#   OUT_DIR/rootfs.img    raw ext4 root filesystem (label softroce-root)
#   OUT_DIR/vmlinuz       guest kernel   (copied from the image's /boot)
#   OUT_DIR/initrd.img    guest initrd   (copied from the image's /boot)
#   OUT_DIR/packages.manifest, OUT_DIR/image.info
# Usage: build-image.sh OUT_DIR MIRROR_URL [SUITE]
#   SUITE: bookworm (Debian 12, kernel 6.1; default) or trixie (Debian 13, kernel 6.12)
# Called by ../run, which caches OUT_DIR keyed by the suite and a hash of this folder's files.
# Needs root (debootstrap), debootstrap and e2fsprogs >= 1.43 (mkfs.ext4 -d).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:?usage: build-image.sh OUT_DIR MIRROR_URL [SUITE]}
MIRROR=${2:?usage: build-image.sh OUT_DIR MIRROR_URL [SUITE]}
SUITE=${3:-bookworm}
case "$SUITE" in bookworm|trixie) ;; *) echo "unsupported suite $SUITE (bookworm or trixie)" >&2; exit 2 ;; esac
T0=${SOFTROCE_T0:-$(date +%s)}

say() {
  local s=$(( $(date +%s) - T0 ))
  printf '[softroce %02d:%02d] %s\n' $((s / 60)) $((s % 60)) "$*"
}

ROOT=$OUT/rootfs
mkdir -p "$ROOT"

# packages.txt: a plain name is for every suite; "SUITE: name" only for that suite.
pkgs=$(sed -e 's/#.*//' "$HERE/packages.txt" \
       | awk -v suite="$SUITE" '$1 ~ /:$/ { if ($1 == suite ":") { $1 = ""; print } ; next } { print }' \
       | tr -s ' \t\n' '\n' | sed '/^$/d' | paste -sd, -)

say "image: debootstrap $SUITE (minbase + $(tr ',' '\n' <<<"$pkgs" | wc -l) packages) from $MIRROR"
say "image: this takes several minutes; full log: $OUT/debootstrap.log"
# Print the first line of each kind of step debootstrap takes (Retrieving,
# Extracting, Configuring, ...), so a slow mirror or unpack stays visible.
set +e
debootstrap --variant=minbase --components=main --include="$pkgs" \
    "$SUITE" "$ROOT" "$MIRROR" 2>&1 | tee "$OUT/debootstrap.log" | {
  declare -A seen=()
  while IFS= read -r line; do
    verb=${line#I: }; verb=${verb%% *}
    case "$line" in
      I:*) if [ -z "${seen[$verb]:-}" ]; then say "image:   ${line#I: }"; seen[$verb]=1; fi ;;
      E:*|W:*) say "image:   $line" ;;
    esac
  done
}
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  say "image: debootstrap failed (exit $rc); last lines of its log:"
  tail -n 30 "$OUT/debootstrap.log" >&2 || true
  [ -f "$ROOT/debootstrap/debootstrap.log" ] && tail -n 30 "$ROOT/debootstrap/debootstrap.log" >&2
  exit 1
fi

# --- checks: fail the build here rather than at boot ---
shopt -s nullglob
kernels=("$ROOT"/boot/vmlinuz-*)
initrds=("$ROOT"/boot/initrd.img-*)
shopt -u nullglob
[ ${#kernels[@]} -eq 1 ] || { echo "expected one kernel in $ROOT/boot, found ${#kernels[@]}" >&2; exit 1; }
[ ${#initrds[@]} -eq 1 ] || { echo "expected one initrd in $ROOT/boot, found ${#initrds[@]}" >&2; exit 1; }
kver=${kernels[0]##*/vmlinuz-}
for mod in rdma_rxe rdma_ucm 9pnet_virtio 9p virtio_net; do
  find "$ROOT/lib/modules/$kver" -name "$mod.ko*" | grep -q . \
    || { echo "kernel module $mod missing from the image" >&2; exit 1; }
done
for cmd in java ibv_devinfo rping ib_read_bw rdma modprobe ip bash timeout; do
  found=0
  for d in usr/bin usr/sbin bin sbin; do
    if [ -e "$ROOT/$d/$cmd" ] || [ -L "$ROOT/$d/$cmd" ]; then found=1; break; fi
  done
  [ "$found" = 1 ] || { echo "command $cmd missing from the image" >&2; exit 1; }
done

# --- configure ---
install -m 0755 "$HERE/boot-stub.sh" "$ROOT/sbin/softroce-init"
echo softroce-guest > "$ROOT/etc/hostname"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$ROOT/etc/hosts"
printf '# root is mounted by the kernel (root=/dev/vda rw); see softroce init\n' > "$ROOT/etc/fstab"
mkdir -p "$ROOT/payload" "$ROOT/results"
# Trim what a guest never needs.
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/cache/apt/*.bin \
       "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* \
       "$ROOT"/usr/share/locale/*

dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Package} ${Version}\n' > "$OUT/packages.manifest"
cp "${kernels[0]}" "$OUT/vmlinuz"
cp "${initrds[0]}" "$OUT/initrd.img"

# --- raw ext4 image, filled straight from the directory (no mount) ---
used_mb=$(du -sm --apparent-size "$ROOT" | cut -f1)
size_mb=$(( used_mb + 2048 ))
say "image: mkfs.ext4 -d ($used_mb MiB of files, ${size_mb} MiB sparse image)"
mkfs.ext4 -q -F -L softroce-root -d "$ROOT" "$OUT/rootfs.img" "${size_mb}M" >/dev/null

{
  echo "suite=$SUITE"
  echo "kernel=$kver"
  echo "java=$(grep -m1 '^openjdk-[0-9]*-jre-headless ' "$OUT/packages.manifest" | cut -d' ' -f1-2)"
  echo "files_mb=$used_mb"
  echo "image_mb=$size_mb"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$OUT/image.info"

rm -rf --one-file-system "$ROOT"
say "image: built (kernel $kver)"
