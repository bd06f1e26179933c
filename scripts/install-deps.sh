#!/usr/bin/env bash
# Installs the Debian packages dprobe needs. Safe to run again: it asks
# apt only for what is missing.
#
#   scripts/install-deps.sh          everything: build, test, benchmark,
#                                    the QEMU selftests, the arm64 cross build
#   scripts/install-deps.sh --main   what the main job (scripts/run.sh)
#                                    needs: build the CLI and the agent, and
#                                    the programs it traces
set -euo pipefail

# The main job's: the toolchain, the libraries dprobe links, the programs
# scripts/run.sh traces.
MAIN_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang
  libelf-dev libdw-dev libzydis-dev libcli11-dev libfmt-dev libiberty-dev
  sqlite3 python3 coreutils
)

PACKAGES=(
  "${MAIN_PACKAGES[@]}"
  # toolchain extras: build cache, checks, libFuzzer's runtime
  ccache git clang-format clang-tidy libclang-rt-14-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # bench/syscall_cost.sh compares syscall tracing with strace
  strace
  # real programs the tests trace
  xz-utils perl openssl
  # <sys/sdt.h>: the test programs' own SDT probe points
  systemtap-sdt-dev
  # a Rust program, its names in both manglings (tests/programs/rust_calls.rs)
  rustc
  # a real container runtime: attach into a podman container
  # (tests/integration/attach_container_test.cc); runc where crun cannot
  # run on the machine's cgroups
  podman runc
  # gdb: the oracle of user stack traces (tests/integration/analysis_stack_test.cc)
  gdb
  # JIT code in stack traces (tests/integration/jit_frames_test.cc)
  nodejs default-jdk-headless
  # the man page check (man --warnings, col) and the .deb test (cpack's
  # dpkg-shlibdeps comes with build-essential's dpkg-dev)
  man-db groff-base bsdextrautils
  # selftests booted in QEMU (tests/selftests/vm): emulators, the guests'
  # busybox, the initramfs, and the arm64 cross compiler
  qemu-system-x86 qemu-system-arm qemu-user busybox-static cpio g++-aarch64-linux-gnu
)

# The arm64 cross build's libraries, through dpkg's multiarch.
ARM64_PACKAGES=(
  libelf-dev:arm64 libdw-dev:arm64 libfmt-dev:arm64 libzydis-dev:arm64 libiberty-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64 systemtap-sdt-dev:arm64
)

wanted=("${PACKAGES[@]}" "${ARM64_PACKAGES[@]}")
arm64=true
if [ "${1:-}" = --main ]; then
  wanted=("${MAIN_PACKAGES[@]}")
  arm64=false
fi

missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
add_arm64=false
if [ "$arm64" = true ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  add_arm64=true
fi

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
