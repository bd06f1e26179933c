#!/usr/bin/env bash
# Per-call cost of a probe inside a guest booted in QEMU (Debian's kernel,
# TCG): optimized probe, breakpoint probe and the kernel's uprobe on the
# same function, entry and return, and the added cost of each in units of
# a bare call (tests/selftests/bench/probe_cost.tc). Under emulation the
# absolute times mean little: the ratios, measured in one run, are the
# result.
#   usage: bench/guest_probe_cost.sh [arm64|x86_64]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-arm64}
case "$arch" in
  arm64 | aarch64) build=build-arm64 ;;
  x86_64) build=build ;;
  *) echo "guest_probe_cost.sh: arm64 or x86_64, not $arch" >&2; exit 2 ;;
esac
tests/selftests/vm/boot.sh "$arch" "$build" --timeout 1800 \
  --cases tests/selftests/bench/probe_cost.tc --append dprobe.verbose=1 |
  sed -n 's/^# \(probe cost on\|no probe\|dprobe \|kernel u\)/\1/p'
