#!/bin/bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Boots Debian's kernel for ARCH in QEMU (software emulation: TCG, no KVM)
# with an initramfs holding BUILD_DIR's dprobe, its test programs and the
# selftests, runs the suite in the guest, and prints what the guest printed:
# its TAP lines and its "N passed, N failed" line.
#
#   boot.sh x86_64 build [--timeout SECONDS] [--cases 'NAME NAME'] [--no-unit] [-v]
#   boot.sh arm64 build-arm64
#
#   --timeout  the guest is killed after this long, and that fails (900)
#   --cases    run only these cases in the guest
#   --no-unit  leave out the unit tests (arm64 runs them beside the cases;
#              its integration suites only with DPROBE_FULL_TESTS=1)
#   --append   more kernel command-line arguments (e.g. loglevel=7)
#   -v         show the console while the guest runs
#
# Fails (exit 1) on a failed case, a kernel panic, a guest that hangs past
# the timeout, and a guest whose results are missing or cut short. Kernel
# packages are fetched once (tests/selftests/vm/fetch.sh says where they
# are cached); the initramfs and the console log go to BUILD_DIR/selftests-vm/.
set -euo pipefail

usage() { sed -n '8,16s/^# \{0,1\}//p' "$0"; }
arch=${1:-}
build=${2:-}
if [ -z "$arch" ] || [ -z "$build" ]; then usage >&2; exit 2; fi
shift 2
timeout_s=900
cases=
extra_append=
verbose=0
no_unit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --cases) cases=${2?}; shift 2 ;;
    --append) extra_append=${2?}; shift 2 ;;
    --no-unit) no_unit=1; shift ;;
    -v) verbose=1; shift ;;
    *) echo "boot.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
[ -d "$build" ] || { echo "boot.sh: no build directory $build (scripts/build.sh builds it)" >&2; exit 1; }
build=$(cd "$build" && pwd)

case "$arch" in
  x86_64)
    qemu="qemu-system-x86_64"
    qemu_args=(-M q35 -accel tcg -cpu max)
    console=ttyS0
    unit= ;;
  arm64 | aarch64)
    arch=arm64
    qemu="qemu-system-aarch64"
    # Pointer authentication with QEMU's own cheap algorithm: the
    # architected one (QARMA) costs much time under TCG and tests nothing here.
    qemu_args=(-M virt -accel tcg -cpu max,pauth-impdef=on)
    console=ttyAMA0
    # The engine's own test suites are x86_64's: the other unit tests run
    # in the guest, beside the cases; the integration suites (the longest
    # part under emulation) in the full tier only (DPROBE_FULL_TESTS=1).
    unit=--unit-no-integration
    [ "${DPROBE_FULL_TESTS:-0}" = 0 ] || unit=--unit
    [ "$no_unit" = 0 ] || unit= ;;
  *) echo "boot.sh: unknown architecture '$arch' (x86_64 or arm64)" >&2; exit 2 ;;
esac
command -v "$qemu" > /dev/null ||
  { echo "boot.sh: no $qemu: install qemu-system-x86 / qemu-system-arm (scripts/install-deps.sh)" >&2; exit 1; }

work="$build/selftests-vm"
mkdir -p "$work"
initramfs="$work/initramfs-$arch.cpio.gz"
log="$work/console-$arch.log"

started=$(date +%s)
paths=$("$here/fetch.sh" "$arch")
kernel=$(printf '%s\n' "$paths" | sed -n 's/^KERNEL=//p')
busybox=$(printf '%s\n' "$paths" | sed -n 's/^BUSYBOX=//p')
TRACED_BUSYBOX=$(printf '%s\n' "$paths" | sed -n 's/^TRACED_BUSYBOX=//p') \
  "$here/initramfs.sh" "$build" "$busybox" "$initramfs" $unit

append="console=$console panic=-1 quiet"
[ -z "$cases" ] || append="$append dprobe.cases=$(printf '%s' "$cases" | tr ' ' ',')"
[ -z "$extra_append" ] || append="$append $extra_append"

echo "boot.sh: booting $(basename "$kernel") on $qemu (TCG), at most ${timeout_s}s"
booted=$(date +%s)
status=0
run_qemu() {
  timeout -s KILL "$timeout_s" "$qemu" "${qemu_args[@]}" -m 1G -smp 1 -nographic -no-reboot \
    -nic none -kernel "$kernel" -initrd "$initramfs" -append "$append" < /dev/null
}
if [ "$verbose" = 1 ]; then
  run_qemu 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
else
  run_qemu > "$log" 2>&1 || status=$?
fi
finished=$(date +%s)

# The console, without carriage returns and terminal control sequences
# (the firmware's and the kernel's).
tr -d '\r' < "$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[c()][0-9A-B]\{0,1\}//g' > "$log.txt"
mv "$log.txt" "$log"

tail_of_console() {
  echo "--- last lines of the console ($log) ---"
  tail -n 40 "$log"
  echo "---"
}

begin='^@@@ DPROBE-SELFTEST BEGIN '
end='^@@@ DPROBE-SELFTEST END status=\([0-9]*\) @@@$'
guest_status=$(sed -n "s/$end/\1/p" "$log" | tail -n 1)
# What the suite printed: the lines between the markers.
results=$(sed -n "/$begin/,/^@@@ DPROBE-SELFTEST END/p" "$log" | sed '1d;$d')
[ -n "$results" ] && printf '%s\n' "$results"

failure=
if grep -q 'Kernel panic' "$log"; then
  failure="the $arch kernel panicked"
elif [ "$status" -eq 137 ] || [ "$status" -eq 124 ]; then
  failure="the $arch guest did not finish within ${timeout_s}s (killed)"
elif ! grep -q "$begin" "$log"; then
  failure="the $arch guest never started the suite (QEMU exit status $status)"
elif [ -z "$guest_status" ]; then
  failure="the $arch guest's results are cut short: no end marker (QEMU exit status $status)"
elif ! printf '%s\n' "$results" | grep -q '^[0-9]* passed, [0-9]* failed'; then
  failure="the $arch guest printed no 'N passed, N failed' line"
elif [ "$guest_status" -ne 0 ]; then
  failure="the suite failed in the $arch guest (status $guest_status)"
fi

echo "boot.sh: $arch: $((finished - booted))s in the guest, $((finished - started))s in all" \
  "(kernel $(basename "$kernel"))"
if [ -n "$failure" ]; then
  tail_of_console
  echo "boot.sh: FAILED: $failure"
  exit 1
fi
