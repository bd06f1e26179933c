#!/usr/bin/env bash
# Configures and builds dprobe into build/ (the CLI is build/dprobe).
# clang is the project's compiler: it also builds the libFuzzer targets.
# Warnings are errors. ccache keeps rebuilds fast.
#
#   scripts/build.sh           everything: the CLI and the agent, unit and
#                              integration tests, benchmarks, fuzzers; then
#                              the arm64 cross build
#   scripts/build.sh --main    the CLI and the agent only (what
#                              scripts/run.sh needs), nothing else, and
#                              without debug information
#
# The arm64 cross build goes into build-arm64/ (Debian's aarch64 GCC and
# the arm64 multiarch libraries, cmake/toolchain-aarch64.cmake): dprobe
# check and list, their unit tests and the selftests' program, which the
# arm64 selftest guest boots with. DPROBE_ARM64=0 leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
configure() {
  cmake -S . -B build -G Ninja \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DDPROBE_WERROR=ON "$@" >/dev/null
}
if [ "${1:-}" = --main ]; then
  shift
  # The same code as the full build (-O2), without its debug information,
  # which costs a third of the compile time.
  configure -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DDPROBE_TESTS=OFF -DDPROBE_BENCH=OFF -DDPROBE_FUZZ=OFF "$@"
  exec cmake --build build --target dprobe
fi
# Explicitly on: a build/ configured by --main has them off in its cache.
configure -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPROBE_TESTS=ON -DDPROBE_BENCH=ON -DDPROBE_FUZZ=ON "$@"
cmake --build build
if [ "${DPROBE_ARM64:-1}" != 0 ]; then
  cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPROBE_WERROR=ON -DDPROBE_BENCH=OFF -DDPROBE_FUZZ=OFF >/dev/null
  cmake --build build-arm64
fi
