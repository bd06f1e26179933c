#!/bin/bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds the initramfs (a gzip'ed newc cpio) a selftest guest boots:
#
#   initramfs.sh BUILD_DIR BUSYBOX OUT.cpio.gz [--unit | --unit-no-integration]
#
#   /init                          tests/selftests/vm/init
#   /bin/busybox                   static; /init makes its applet links
#   /opt/dprobe/dprobe             the build's dprobe, and its agent and attach hook when built
#   /opt/dprobe/tests/programs/    the build's test programs, and with TRACED_BUSYBOX set
#                                  (fetch.sh's) Debian's dynamic busybox as busybox
#   /opt/dprobe/tests/selftests/   run.sh, lib.sh, cases/, bench/, and data/ (the build's)
#   /opt/dprobe/unit/              with --unit: the build's GoogleTest binaries
#   /lib64, /usr/lib/TRIPLET       the dynamic loader and every shared library
#                                  the binaries above need, found through their
#                                  DT_NEEDED entries in TRIPLET's directories
#
# The ISA is the build's (its CMakeCache.txt says which compiler and strip);
# for arm64 the libraries come from the arm64 packages that dpkg's multiarch
# installed in /usr/lib/aarch64-linux-gnu. Debug information is stripped
# from everything but the test programs, whose symbols the cases name.
set -euo pipefail

build=${1:?usage: initramfs.sh BUILD_DIR BUSYBOX OUT.cpio.gz}
busybox=${2:?busybox}
out=${3:?output file}
with_unit=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
selftests=$(dirname "$here")

build=$(cd "$build" && pwd)
[ -x "$build/dprobe" ] || { echo "initramfs: no $build/dprobe: build first" >&2; exit 1; }
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
strip_tool=$(cache_value CMAKE_STRIP)
[ -n "$strip_tool" ] || strip_tool="strip"

machine=$(readelf -h "$build/dprobe" | sed -n 's/^ *Machine: *//p')
case "$machine" in
  *X86-64*) triplet=x86_64-linux-gnu ;;
  *AArch64*) triplet=aarch64-linux-gnu ;;
  *) echo "initramfs: $build/dprobe is for '$machine', not x86_64 or arm64" >&2; exit 1 ;;
esac
libdirs="/lib/$triplet /usr/lib/$triplet /lib /usr/lib"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,etc,proc,root,sys,tmp,usr/lib/"$triplet"} \
  "$root/opt/dprobe/tests/programs" "$root/opt/dprobe/tests/selftests" "$root/opt/dprobe/unit"
ln -s usr/lib "$root/lib"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"

install -m 755 "$busybox" "$root/bin/busybox"
install -m 755 "$here/init" "$root/init"

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# Copies an ELF file, without its debug information unless told to keep it.
elfs=()
add_elf() {  # SOURCE DIRECTORY [keep]
  local copy
  copy="$2/$(basename "$1")"
  install -m 755 "$1" "$copy"
  [ "${3:-}" = keep ] || "$strip_tool" --strip-debug "$copy"
  elfs+=("$copy")
}

add_elf "$build/dprobe" "$root/opt/dprobe"
for library in libdprobe_agent.so libdprobe_attach.so; do
  if [ -f "$build/$library" ]; then add_elf "$build/$library" "$root/opt/dprobe"; fi
done
# Debian's dynamic busybox (fetch.sh), a real program to trace, beside
# the test programs as `busybox`.
if [ -n "${TRACED_BUSYBOX:-}" ]; then
  install -m 755 "$TRACED_BUSYBOX" "$root/opt/dprobe/tests/programs/busybox"
  elfs+=("$root/opt/dprobe/tests/programs/busybox")
fi
for program in "$build"/tests/programs/*; do
  if is_elf "$program" && [ -x "$program" ]; then add_elf "$program" "$root/opt/dprobe/tests/programs" keep; fi
done
if [ "$with_unit" = --unit ] || [ "$with_unit" = --unit-no-integration ]; then
  for unit in "$build"/tests/*_test; do
    # The integration suites, the longest under emulation, are the full
    # tier's (DPROBE_FULL_TESTS=1, scripts/test.sh --full).
    case "$with_unit:$(basename "$unit")" in --unit-no-integration:integration*) continue ;; esac
    if is_elf "$unit"; then add_elf "$unit" "$root/opt/dprobe/unit"; fi
  done
  # The unit tests name their data by the absolute paths of the build
  # host's trees (DPROBE_SOURCE_DIR, DPROBE_TEST_DATA_DIR, DPROBE_BINARY):
  # the same paths in the guest.
  source_dir=$(cache_value CMAKE_HOME_DIRECTORY)
  mkdir -p "$root$source_dir/docs" "$root$build"
  cp "$source_dir/docs/language.md" "$root$source_dir/docs/"
  (cd "$source_dir" && find tests/unit -path '*/data/*' -o -path '*/fixtures/*' | cpio --quiet -pdm "$root$source_dir")
  ln -s /opt/dprobe/dprobe "$root$build/dprobe"
fi

cp "$selftests/run.sh" "$selftests/lib.sh" "$root/opt/dprobe/tests/selftests/"
cp -r "$selftests/cases" "$root/opt/dprobe/tests/selftests/cases"
cp -r "$selftests/bench" "$root/opt/dprobe/tests/selftests/bench"
[ -f "$here/unit_skips.txt" ] && cp "$here/unit_skips.txt" "$root/opt/dprobe/tests/selftests/"
[ -d "$build/tests/selftests/data" ] || { echo "initramfs: no $build/tests/selftests/data: build first" >&2; exit 1; }
cp -r "$build/tests/selftests/data" "$root/opt/dprobe/tests/selftests/data"

# The dynamic loader, where the binaries' PT_INTERP says it is.
interp=$(readelf -lW "$build/dprobe" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || { echo "initramfs: $build/dprobe has no program interpreter" >&2; exit 1; }
mkdir -p "$root$(dirname "$interp")"
interp_host=$interp
[ -e "$interp_host" ] || interp_host="/usr/lib/$triplet/$(basename "$interp")"
[ -e "$interp_host" ] || { echo "initramfs: no $interp on this machine (is libc6 for $triplet installed?)" >&2; exit 1; }
cp -L "$interp_host" "$root$interp"

# Every DT_NEEDED library, transitively, from the triplet's directories.
declare -A copied=()
queue=("${elfs[@]}")
while [ ${#queue[@]} -gt 0 ]; do
  file=${queue[0]}
  queue=("${queue[@]:1}")
  for needed in $(readelf -dW "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
    [ -n "${copied[$needed]:-}" ] && continue
    found=
    for dir in $libdirs; do
      if [ -e "$dir/$needed" ] && readelf -h "$dir/$needed" 2>/dev/null | grep -q "$machine"; then
        found="$dir/$needed"
        break
      fi
    done
    [ -n "$found" ] || { echo "initramfs: $file needs $needed, not found in $libdirs" >&2; exit 1; }
    copied[$needed]=1
    cp -L "$found" "$root/usr/lib/$triplet/$needed"
    queue+=("$root/usr/lib/$triplet/$needed")
  done
done

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
  cpio --quiet --null -o -H newc -R 0:0 | gzip -1 > "$out.tmp")
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1), ${#copied[@]} libraries for $triplet)" >&2
