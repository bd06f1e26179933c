#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds, and runs every test (unit tests, the clang-format check,
# 60 s of parser fuzzing, the kernel oracle where root and tracefs allow,
# and the selftests on this host and in Debian's kernels booted in QEMU).
# The two guests boot first, with their output shown (each one's TAP lines
# and "N passed, N failed"); then every other test. Ends with ctest's
# summary line. Extra arguments go to ctest, which then runs only what they
# select, in one go.
#
#   scripts/test.sh           the default tier (docs/testing.md): what CI runs
#   scripts/test.sh --full    also the soaks at full length, the arm64
#                             guest's integration suites (DPROBE_FULL_TESTS=1)
#                             and the fuzzer from a new seed (DPROBE_FUZZ_SEED=0)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --full ]; then
  shift
  export DPROBE_FULL_TESTS=1
  export DPROBE_FUZZ_SEED=0
fi
scripts/install-deps.sh
scripts/build.sh
# A test that hangs is cut off after 10 minutes (the longest, the full
# tier's arm64 guest, sets its own 20), not after the whole CI budget.
timeout=(--timeout 600)
if [ $# -gt 0 ]; then
  exec ctest --test-dir build --output-on-failure -j"$(nproc)" "${timeout[@]}" "$@"
fi
# The guests' output is kept: a failure there is recapped at the very end,
# where a log shown only from its tail still has it.
guest_log=build/selftests-guests.log
guests=0
ctest --test-dir build -R '^selftests\.vm_' -j"$(nproc)" "${timeout[@]}" -V 2>&1 | tee "$guest_log" ||
  guests=$?
others=0
ctest --test-dir build -E '^selftests\.vm_' --output-on-failure -j"$(nproc)" "${timeout[@]}" ||
  others=$?
if [ "$guests" -ne 0 ]; then
  echo
  echo "The guests failed (their whole output is above, and in $guest_log):"
  grep -E -A40 '^[0-9]+: not ok' "$guest_log" | grep -E '^[0-9]+: (not ok|#)' | head -150 || true
  grep -E '^[0-9]+: [0-9]+ passed, [0-9]+ failed|Test +#[0-9]+: selftests' "$guest_log" || true
fi
[ "$guests" -eq 0 ] && [ "$others" -eq 0 ]
