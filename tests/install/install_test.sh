#!/usr/bin/env bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# dprobe installed as a user would have it, in scratch directories only
# (nothing on this machine changes):
#   1. `cmake --install BUILD --prefix SCRATCH/prefix`;
#   2. the Debian package CPack makes, unpacked with `dpkg-deb -x` into
#      SCRATCH/root (what `dpkg -i` would put under /).
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
echo "install_test: ok"
