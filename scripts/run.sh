#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs what is missing,
# builds, and puts dprobe to work on a real program of the machine (sqlite3
# and its library): list its functions, then check probes on them and show
# the record layout they would produce.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
set -x
build/dprobe list -x /usr/bin/sqlite3 'libsqlite3.so.0:sqlite3_open*'
build/dprobe check -x /usr/bin/sqlite3 --format \
  -e 'p:sqlite/open libsqlite3.so.0:sqlite3_open_v2 path=+0(%di):string flags=%dx:x32' \
  -e 'r:sqlite/step libsqlite3.so.0:sqlite3_step rc=$retval:s32'
