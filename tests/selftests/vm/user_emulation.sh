#!/bin/sh
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Runs the arm64 cross build's unit tests that need no kernel of their own
# (the decoder, the simulator and the trampoline writer of src/arch/arm64,
# the language, the trace format, the protocol) under qemu-aarch64 user
# emulation, on this host: a check in seconds beside the arm64 guest, which
# runs them all under Debian's arm64 kernel.
#
#   user_emulation.sh ARM64_BUILD_DIR
#
# Leaves out what unit_skips.txt leaves out in the guest, and what user
# emulation cannot do (below). Prints one line per binary and
# "N passed, N failed"; exits 77 (skipped) without qemu-aarch64 or the
# cross build.
set -u
build=${1:?usage: user_emulation.sh ARM64_BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
qemu=$(command -v qemu-aarch64 || true)
binaries="arch_test base_test lang_test protocol_test syscalls_test trace_test"

if [ -z "$qemu" ] || [ ! -x "$build/tests/arch_test" ]; then
  echo "user_emulation: needs qemu-aarch64 (qemu-user) and the arm64 cross build in $build"
  exit 77
fi

# qemu-user runs one process's instructions; it does not emulate ptrace of
# another process, which RemoteRegs stops a child with.
user_skips="RemoteRegs.*"

passed=0
failed=0
for name in $binaries; do
  binary="$build/tests/$name"
  [ -x "$binary" ] || continue
  filter=$(awk -v b="$name" '$1 == b {printf "%s%s", sep, $2; sep = ":"}' "$here/unit_skips.txt")
  [ "$name" != arch_test ] || filter="${filter:+$filter:}$user_skips"
  log=$(mktemp)
  status=0
  "$qemu" -L /usr/aarch64-linux-gnu "$binary" --gtest_brief=1 \
    ${filter:+"--gtest_filter=-$filter"} > "$log" 2>&1 || status=$?
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log" | tail -n 1)
  if [ "$status" -eq 0 ] && [ -n "$ran" ]; then
    echo "ok - $name: ${ran} tests"
    passed=$((passed + 1))
  else
    echo "not ok - $name: ${ran:-?} tests (exit $status)"
    grep '^\[  FAILED  \] [A-Za-z]' "$log" | sort -u | sed 's/^/# /'
    tail -n 20 "$log" | sed 's/^/# /'
    failed=$((failed + 1))
  fi
  rm -f "$log"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
