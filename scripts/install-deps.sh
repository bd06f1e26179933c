#!/usr/bin/env bash
# Installs every Debian package dprobe needs to build, test and run.
# Safe to run again: it asks apt only for what is missing.
set -euo pipefail

PACKAGES=(
  # toolchain and build
  build-essential cmake ninja-build ccache pkg-config git
  clang clang-format clang-tidy libclang-rt-14-dev
  # libraries dprobe links
  libelf-dev libdw-dev libzydis-dev libcli11-dev libfmt-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # real programs the tests trace
  sqlite3 xz-utils coreutils python3 perl openssl
  # selftests booted in QEMU (tests/selftests/vm): emulators, the guests'
  # busybox, the initramfs, and the arm64 cross compiler
  qemu-system-x86 qemu-system-arm qemu-user busybox-static cpio g++-aarch64-linux-gnu
)

# The arm64 cross build's libraries, through dpkg's multiarch.
ARM64_PACKAGES=(
  libelf-dev:arm64 libdw-dev:arm64 libfmt-dev:arm64 libzydis-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64
)

missing=()
for pkg in "${PACKAGES[@]}" "${ARM64_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
add_arm64=false
if ! dpkg --print-foreign-architectures | grep -qx arm64; then add_arm64=true; fi

if [ ${#missing[@]} -eq 0 ] && [ "$add_arm64" = false ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or with sudo) to install them" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ "$add_arm64" = true ]; then
  echo "install-deps: adding the arm64 architecture (dpkg multiarch)"
  dpkg --add-architecture arm64
fi
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
