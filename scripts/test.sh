#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds, and runs every test (unit tests, the clang-format check,
# 60 s of parser fuzzing, the kernel oracle where root and tracefs allow,
# and the selftests on this host and in Debian's kernels booted in QEMU).
# The two guests boot first, with their output shown (each one's TAP lines
# and "N passed, N failed"); then every other test. Ends with ctest's
# summary line. Extra arguments go to ctest, which then runs only what they
# select, in one go.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
if [ $# -gt 0 ]; then
  exec ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
fi
guests=0
ctest --test-dir build -R '^selftests\.vm_' -j"$(nproc)" -V || guests=$?
others=0
ctest --test-dir build -E '^selftests\.vm_' --output-on-failure -j"$(nproc)" || others=$?
[ "$guests" -eq 0 ] && [ "$others" -eq 0 ]
