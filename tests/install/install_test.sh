#!/usr/bin/env bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# dprobe installed as a user would have it, in scratch directories only
# (nothing on this machine changes):
#   1. `cmake --install BUILD --prefix SCRATCH/prefix`;
#   2. the Debian package CPack makes, unpacked with `dpkg-deb -x` into
#      SCRATCH/root (what `dpkg -i` would put under /);
#   3. as root, the package installed for real with `dpkg -i` (its
#      dependencies checked by dpkg) in a throwaway copy of this machine:
#      an overlay over / whose changes go to a tmpfs, in a mount namespace
#      of its own, chrooted into; then `dpkg -r`. The machine's own /
#      and dpkg database never change.
# In each tree: --version, the man page and the completion, `dprobe run`
# tracing ls with the agent of that tree (found relative to the installed
# binary, none beside it), and `dprobe attach` to a sleeping process.
# Exit 77 (skipped) where dpkg-deb or cpack is missing.
#
#   tests/install/install_test.sh build
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in cpack dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "install_test: no $tool"; exit 77; }
done
scratch=$(mktemp -d /tmp/dprobe-install-XXXXXX)
sleeper=0
cleanup() {
  [ "$sleeper" -eq 0 ] || kill "$sleeper" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  exit 1
}

check_tree() {  # PREFIX
  local prefix=$1 dprobe=$1/bin/dprobe
  echo "== $prefix"
  "$dprobe" --version | grep -q '^dprobe [0-9.]* (git [^ ]*)$' || fail "$dprobe --version"
  "$dprobe" --version
  [ -f "$prefix/lib/dprobe/libdprobe_agent.so" ] || fail "no agent in $prefix/lib/dprobe"
  [ -f "$prefix/lib/dprobe/libdprobe_attach.so" ] || fail "no attach hook in $prefix/lib/dprobe"
  [ ! -e "$prefix/bin/libdprobe_agent.so" ] || fail "an agent beside the installed binary"
  [ -f "$prefix/share/man/man1/dprobe.1" ] || fail "no man page"
  LC_ALL=C man -l "$prefix/share/man/man1/dprobe.1" | grep -q 'dprobe - kprobe' || fail "man -l"
  bash -c 'source "$1" && complete -p dprobe' _ "$prefix/share/bash-completion/completions/dprobe" \
    >/dev/null || fail "the bash completion does not load"

  local trace
  trace=$("$dprobe" run -e 'p:t/opendir libc.so.6:opendir path=+0(%di):string' -- ls "$scratch")
  grep -q "opendir: (opendir+0x0/0x[0-9a-f]*) path=\"$scratch\"" <<<"$trace" ||
    fail "dprobe run from $prefix traced nothing: $trace"
  # The agent the traced program got is the tree's own (a followed child
  # keeps it in LD_PRELOAD).
  local preload
  preload=$("$dprobe" run --follow -e 'p:t/opendir libc.so.6:opendir' -- /bin/sh -c 'echo "$LD_PRELOAD"')
  [ "$preload" = "$prefix/lib/dprobe/libdprobe_agent.so" ] || fail "the agent preloaded: $preload"

  sleep 30 &
  sleeper=$!
  sleep 0.2
  "$dprobe" attach -p "$sleeper" --duration 0.3 -e 'p libc.so.6:clock_nanosleep' >/dev/null ||
    fail "dprobe attach from $prefix"
  kill "$sleeper"
  wait "$sleeper" 2>/dev/null || true
  sleeper=0
}

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
check_tree "$scratch/prefix"

(cd "$scratch" && cpack --config "$build/CPackConfig.cmake" -B "$scratch/package" >/dev/null) ||
  fail "cpack"
deb=$(ls "$scratch"/package/dprobe_*.deb)
echo "== $(basename "$deb")"
dpkg-deb --field "$deb" Package Version Architecture Depends
dpkg-deb --field "$deb" Depends | grep -q 'libelf1' || fail "the package does not depend on libelf1"
dpkg-deb -x "$deb" "$scratch/root"
check_tree "$scratch/root/usr"

# 3. dpkg -i on a copy of this machine.
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v chroot >/dev/null; then
  echo "install_test: dpkg -i not tried (needs root, unshare and chroot)"
  echo "install_test: ok"
  exit 0
fi
mkdir -p "$scratch/changes"
mount -t tmpfs dprobe-install "$scratch/changes"
cleanup_mount() {
  umount "$scratch/changes" 2>/dev/null || true
  cleanup
}
trap cleanup_mount EXIT
mkdir -p "$scratch/changes/upper" "$scratch/changes/work" "$scratch/merged"
cp "$deb" "$scratch/changes/dprobe.deb"
echo "== dpkg -i $(basename "$deb") (on an overlay of /)"
unshare --mount --propagation private bash -euo pipefail -c '
  scratch=$1
  root=$scratch/merged
  mount -t overlay dprobe-install \
    -o "lowerdir=/,upperdir=$scratch/changes/upper,workdir=$scratch/changes/work" "$root"
  for dir in proc sys dev; do mount --rbind "/$dir" "$root/$dir"; done
  mount -t tmpfs dprobe-tmp "$root/tmp"
  cp "$scratch/changes/dprobe.deb" "$root/tmp/"
  in_root() { chroot "$root" "$@"; }
  in_root dpkg -i /tmp/dprobe.deb >/dev/null
  [ "$(in_root which dprobe)" = /usr/bin/dprobe ] ||
    { echo "FAIL: dprobe is not /usr/bin/dprobe after dpkg -i"; exit 1; }
  in_root dpkg -s dprobe | grep -q "^Status: install ok installed" ||
    { echo "FAIL: dpkg -s dprobe"; exit 1; }
  trace=$(in_root dprobe run -e "p:t/opendir libc.so.6:opendir path=+0(%di):string" -- ls /tmp)
  grep -q "opendir: (opendir+0x0/0x[0-9a-f]*) path=\"/tmp\"" <<<"$trace" ||
    { echo "FAIL: the installed dprobe traced nothing: $trace"; exit 1; }
  in_root man -w dprobe >/dev/null || { echo "FAIL: man -w dprobe"; exit 1; }
  in_root dpkg -r dprobe >/dev/null
  [ ! -e "$root/usr/bin/dprobe" ] || { echo "FAIL: dpkg -r left /usr/bin/dprobe"; exit 1; }
' _ "$scratch" || fail "dpkg -i on an overlay of /"
dpkg -s dprobe >/dev/null 2>&1 && fail "the machine's own dpkg database changed"
echo "install_test: ok"
