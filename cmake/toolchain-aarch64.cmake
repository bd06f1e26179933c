# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Cross-compiling for arm64 (aarch64) on a Debian x86_64 host, with Debian's
# cross compiler (g++-aarch64-linux-gnu) and the arm64 -dev packages of
# Debian's multiarch (libelf-dev:arm64, ...; scripts/install-deps.sh):
#
#   cmake -S . -B build-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#
# Multiarch puts the arm64 libraries in /usr/lib/aarch64-linux-gnu beside
# the host's, and shares /usr/include: no sysroot is needed. Test binaries
# run under qemu-aarch64 user emulation (qemu-user) when it is there, which
# is how gtest_discover_tests lists them at build time.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Libraries and headers: the arm64 multiarch directories only; programs
# (pkg-config, code generators) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_PREFIX_PATH /usr/lib/aarch64-linux-gnu/cmake)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

find_program(DPROBE_QEMU_AARCH64 qemu-aarch64)
if(DPROBE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DPROBE_QEMU_AARCH64})
endif()
