#!/usr/bin/env bash
# Configures and builds dprobe into build/ (the CLI is build/dprobe).
# clang is the project's compiler: it also builds the libFuzzer targets.
# Warnings are errors. ccache keeps rebuilds fast.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPROBE_WERROR=ON "$@" >/dev/null
cmake --build build
