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
  sqlite3 xz-utils coreutils python3
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or with sudo) to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
