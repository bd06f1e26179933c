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
# Where the arm64 loader and libraries are: Debian's multiarch cross root.
prefix=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
binaries="arch_test base_test lang_test protocol_test syscalls_test trace_test"

if [ -z "$qemu" ] || [ ! -e "$prefix/lib/ld-linux-aarch64.so.1" ] || [ ! -d "$build/tests" ]; then
  echo "user_emulation: needs qemu-aarch64 (qemu-user), the arm64 libraries in $prefix and the" \
    "arm64 cross build in $build"
  exit 77
fi

# What user emulation cannot do, as "BINARY FILTER" lines: qemu-user runs
# one process's instructions and does not emulate ptrace of another
# process (RemoteRegs stops a child); threads or processes that wait on
# each other through a socket or spin on shared memory run far too slowly
# or hang there (seen with Debian 12's qemu-user 7.2). The guest runs them.
user_skips="arch_test RemoteRegs.*
protocol_test Channel.EveryTypeAndSizeKeepsItsFrame
protocol_test Channel.MultiMegabytePayloadsBothWays
protocol_test Channel.PeerCredentialsNameTheConnectingProcess
trace_test RingBuffer.ThreadsAccountForEveryDroppedRecord
trace_test RingBuffer.ChildProcessWritesAndParentDrainsThroughTheSameMemfd
trace_test SharedMemory.AChildProcessWritesWhatTheParentReads"

passed=0
failed=0
for name in $binaries; do
  binary="$build/tests/$name"
  if [ ! -x "$binary" ]; then
    echo "not ok - $name: not in $build/tests (a stale or partial cross build)"
    failed=$((failed + 1))
    continue
  fi
  filter=$({
    awk -v b="$name" '$1 == b {print $2}' "$here/unit_skips.txt"
    printf '%s\n' "$user_skips" | awk -v b="$name" '$1 == b {print $2}'
  } | paste -sd ':' -)
  log=$(mktemp)
  status=0
  "$qemu" -L "$prefix" "$binary" --gtest_brief=1 \
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
