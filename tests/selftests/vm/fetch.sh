#!/bin/bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Fetches what a guest of ARCH boots from Debian's archive, with apt, into
# a cache that outlives the build tree, and prints the paths found there:
#
#   fetch.sh x86_64|arm64
#   KERNEL=/var/cache/dprobe/vm/vmlinuz-6.1.0-56-amd64
#   BUSYBOX=/bin/busybox
#   TRACED_BUSYBOX=/var/cache/dprobe/vm/busybox-dynamic-amd64
#
# The kernel is the image package that linux-image-amd64 (x86_64) or
# linux-image-arm64 (arm64, through dpkg's multiarch) depends on; only its
# vmlinuz is kept: Debian builds the serial console, initramfs, tracefs and
# uprobes into the image, so the guest needs no module. busybox is the
# host's busybox-static on x86_64 and the arm64 busybox-static package's.
#
# The cache is $DPROBE_VM_CACHE, else /var/cache/dprobe/vm when it can be
# written, else ~/.cache/dprobe/vm. A package already there is not fetched
# again; when the archive has a newer one it is fetched beside it.
set -euo pipefail

arch=${1:?usage: fetch.sh x86_64|arm64}
case "$arch" in
  x86_64) debarch=amd64 ;;
  arm64 | aarch64) debarch=arm64 ;;
  *) echo "fetch: unknown architecture '$arch' (x86_64 or arm64)" >&2; exit 2 ;;
esac

cache_dir() {
  if [ -n "${DPROBE_VM_CACHE:-}" ]; then echo "$DPROBE_VM_CACHE"; return; fi
  if mkdir -p /var/cache/dprobe/vm 2>/dev/null && [ -w /var/cache/dprobe/vm ]; then
    echo /var/cache/dprobe/vm
    return
  fi
  echo "${XDG_CACHE_HOME:-$HOME/.cache}/dprobe/vm"
}
cache=$(cache_dir)
mkdir -p "$cache"

# apt-get download runs as the _apt user unless told otherwise, and that
# user may not write to the cache: download as whoever we are.
apt_download() {  # PACKAGE:ARCH
  (cd "$cache" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$1" >&2)
}

# The newest cached .deb of PACKAGE for debarch, if any.
cached_deb() {  # PACKAGE
  ls -1 "$cache/${1}_"*"_${debarch}.deb" 2>/dev/null | sort -V | tail -n 1
}

# PACKAGE's .deb in the cache: the archive's candidate version, fetched if
# it is not there yet; without apt's answer (offline), the newest cached.
fetch_deb() {  # PACKAGE
  local package=$1 version deb
  version=$(apt-cache show --no-all-versions "$package:$debarch" 2>/dev/null |
    sed -n 's/^Version: //p' | head -n 1)
  if [ -z "$version" ]; then
    deb=$(cached_deb "$package")
    if [ -n "$deb" ]; then echo "$deb"; return; fi
    echo "fetch: apt does not know $package:$debarch and the cache ($cache) has none" >&2
    [ "$debarch" = amd64 ] ||
      echo "fetch: scripts/install-deps.sh enables the $debarch architecture (dpkg multiarch)" >&2
    exit 1
  fi
  deb="$cache/${package}_${version//:/%3a}_${debarch}.deb"
  if [ ! -s "$deb" ]; then
    echo "fetch: downloading $package:$debarch $version into $cache" >&2
    if ! apt_download "$package:$debarch"; then
      # The package lists may be older than the archive: refresh, retry once.
      echo "fetch: apt-get download failed; apt-get update and retry" >&2
      apt-get update -qq >&2 || true
      version=$(apt-cache show --no-all-versions "$package:$debarch" | sed -n 's/^Version: //p' | head -n 1)
      deb="$cache/${package}_${version//:/%3a}_${debarch}.deb"
      apt_download "$package:$debarch" || {
        echo "fetch: cannot download $package:$debarch" >&2
        exit 1
      }
    fi
  fi
  [ -s "$deb" ] || { echo "fetch: $deb is missing after the download" >&2; exit 1; }
  echo "$deb"
}

# The kernel image package the meta package points at (linux-image-6.1.0-N-ARCH).
meta=linux-image-$debarch
# Package lists never fetched (or dropped): fetch them once, as root.
if ! apt-cache show "$meta:$debarch" > /dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  echo "fetch: apt knows no $meta:$debarch; apt-get update" >&2
  apt-get update -qq >&2 || true
fi
image=$(apt-cache depends "$meta:$debarch" 2>/dev/null |
  sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -n 1)
if [ -z "$image" ]; then
  # Offline: the newest image package in the cache.
  image=$(ls -1 "$cache"/linux-image-[0-9]*_"$debarch".deb 2>/dev/null | sort -V | tail -n 1 |
    sed 's|.*/\(linux-image-[^_]*\)_.*|\1|')
fi
[ -n "$image" ] || { echo "fetch: cannot tell which package $meta:$debarch depends on" >&2; exit 1; }

image_deb=$(fetch_deb "$image")
kernel="$cache/vmlinuz-${image#linux-image-}-$(basename "$image_deb" .deb | sed 's/.*_\(.*\)_.*/\1/')"
if [ ! -s "$kernel" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  dpkg-deb --fsys-tarfile "$image_deb" | tar -x -C "$tmp" --wildcards './boot/vmlinuz-*'
  found=$(ls "$tmp"/boot/vmlinuz-* 2>/dev/null | head -n 1)
  [ -n "$found" ] || { echo "fetch: no /boot/vmlinuz-* in $image_deb" >&2; exit 1; }
  mv "$found" "$kernel.tmp" && mv "$kernel.tmp" "$kernel"
fi
echo "KERNEL=$kernel"

if [ "$debarch" = amd64 ]; then
  busybox=/bin/busybox
  if [ ! -x "$busybox" ] || readelf -l "$busybox" 2>/dev/null | grep -q 'Requesting program interpreter'; then
    echo "fetch: $busybox is missing or not static: install busybox-static (scripts/install-deps.sh)" >&2
    exit 1
  fi
else
  busybox="$cache/busybox-$debarch"
  if [ ! -s "$busybox" ]; then
    deb=$(fetch_deb busybox-static)
    tmp_bb=$(mktemp -d)
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp_bb" ./bin/busybox
    mv "$tmp_bb/bin/busybox" "$busybox"
    rm -rf "$tmp_bb"
  fi
fi
echo "BUSYBOX=$busybox"

# Debian's busybox package (not -static): linked with the C library, a
# real program of the guest's for the cases to trace (real_programs.tc).
traced="$cache/busybox-dynamic-$debarch"
if [ ! -s "$traced" ]; then
  deb=$(fetch_deb busybox)
  tmp_traced=$(mktemp -d)
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp_traced" ./bin/busybox
  mv "$tmp_traced/bin/busybox" "$traced"
  rm -rf "$tmp_traced"
fi
echo "TRACED_BUSYBOX=$traced"
