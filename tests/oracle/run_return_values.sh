#!/usr/bin/env bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
# The kernel as the oracle of return values: the same return probes on
# libsqlite3's sqlite3_step, once through the kernel's uretprobes
# (uprobe_events `r:`) and once through `dprobe run`, while sqlite3 runs the
# same statements; every return must print the same values, in the same
# order. Needs root, tracefs and sqlite3; otherwise it says why and is
# skipped (77).
#   usage: run_return_values.sh path/to/dprobe
set -uo pipefail
dprobe=${1:?dprobe}
tracing=/sys/kernel/tracing
group=dprobe_retoracle

if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to use uprobe_events"; exit 77; fi
[ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null
if [ ! -w $tracing/uprobe_events ]; then echo "SKIP: no writable $tracing/uprobe_events"; exit 77; fi
if [ -s $tracing/uprobe_events ]; then echo "SKIP: uprobe_events is in use"; exit 77; fi
sqlite3=$(command -v sqlite3) || { echo "SKIP: no sqlite3 in PATH"; exit 77; }
library=$(ldd "$sqlite3" | awk '$1 ~ /^libsqlite3\.so/ {print $3}')
if [ -z "$library" ] || [ ! -f "$library" ]; then echo "SKIP: $sqlite3 uses no libsqlite3"; exit 77; fi
library=$(readlink -f "$library")

source "$(dirname "$0")/lib.sh"

# The file offset of a dynamic symbol, as uprobe_events wants it.
file_offset() { file_offset_in "$library" "$1" -D --defined-only; }
offset=$(file_offset sqlite3_step) || { echo "SKIP: no sqlite3_step in $library"; exit 77; }

workdir=$(mktemp -d /tmp/dprobe-retoracle-XXXXXX)
cleanup() {
  { echo 0 > $tracing/events/$group/enable; } 2>/dev/null
  { echo > $tracing/uprobe_events; } 2>/dev/null
  rm -rf "$workdir"
}
trap cleanup EXIT

# Rows, an empty result, a constraint violation, a division by zero (a
# NULL, not an error), an error in preparing (no step at all), a rollback.
cat > "$workdir/statements.sql" <<'SQL'
create table t(a integer primary key, b text);
insert into t(b) values ('x'), ('y'), ('z');
select * from t;
select count(*) from t where b > 'x';
select * from t where a = 42;
create table u(a unique);
insert into u values (1);
insert into u values (1);
select 1 / 0;
select * from no_such_table;
begin; insert into t(b) values ('w'); rollback;
select group_concat(b) from t;
SQL
run_sqlite() { "$sqlite3" :memory: < "$workdir/statements.sql" > /dev/null 2>&1; }

# "EVENT: ARGS" of each trace line, the location left out: the kernel
# prints raw addresses there, dprobe names the caller and the function.
events() { sed -n 's/^.*: \(ret_[a-z0-9_]*\|in_[a-z0-9_]*\): ([^)]*)/\1:/p'; }

# Each case: one or more definitions, ';'-separated, each
# "r|p EVENT ARGS": the event on sqlite3_step.
kernel_trace() {
  local def kind event args
  IFS=';' read -ra defs <<< "$1"
  for def in "${defs[@]}"; do
    read -r kind event args <<< "$def"
    echo "$kind:$group/$event $library:$offset $args" >> $tracing/uprobe_events || return 1
  done
  echo > $tracing/trace
  echo 1 > $tracing/events/$group/enable
  run_sqlite
  echo 0 > $tracing/events/$group/enable
  grep -v '^#' $tracing/trace | events
  echo > $tracing/uprobe_events
}

dprobe_trace() {
  local def kind event args
  local -a options=()
  IFS=';' read -ra defs <<< "$1"
  for def in "${defs[@]}"; do
    read -r kind event args <<< "$def"
    options+=(-e "$kind:$group/$event libsqlite3.so.0:sqlite3_step $args")
  done
  "$dprobe" run "${options[@]}" -o "$workdir/trace" -- "$sqlite3" :memory: \
    < "$workdir/statements.sql" > /dev/null 2>&1
  events < "$workdir/trace"
}

cases=(
  'r ret_rc rc=$retval:s32'
  'r ret_all rc=$retval:s32 u=$retval:u8 x=$retval:x16 raw=$retval'
  'r ret_regs ax=%ax:x32 eax=%ax:s32'
  'p in_step;r ret_rc rc=$retval:s32'
)

passed=0 failed=0
for c in "${cases[@]}"; do
  expected=$(kernel_trace "$c")
  actual=$(dprobe_trace "$c")
  if [ -n "$expected" ] && [ "$expected" == "$actual" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "DIFFERS: $c"
    diff <(echo "$expected") <(echo "$actual") | head -40 | sed 's/^/  /'
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
