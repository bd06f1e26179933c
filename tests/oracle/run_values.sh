#!/usr/bin/env bash
# The kernel as the oracle of fetched values: the same probes, on the same
# program, once through the kernel's uprobe_events and once through
# `dprobe run`; the arguments of every hit must print the same, event by
# event. Needs root and tracefs; otherwise it says why and is skipped (77).
#   usage: run_values.sh path/to/dprobe path/to/oracle_values
set -uo pipefail
dprobe=${1:?dprobe}
program=${2:?program}
tracing=/sys/kernel/tracing

if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to use uprobe_events"; exit 77; fi
[ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null
if [ ! -w $tracing/uprobe_events ]; then echo "SKIP: no writable $tracing/uprobe_events"; exit 77; fi
if [ -s $tracing/uprobe_events ]; then echo "SKIP: uprobe_events is in use"; exit 77; fi

source "$(dirname "$0")/lib.sh"

# The file offset of a function, as uprobe_events wants it.
file_offset() { file_offset_in "$program" "$1"; }

# The arguments of each trace line: everything after "(location) ".
arguments() { sed -n 's/^.*: oracle_[a-z0-9_]*: ([^)]*) //p'; }

kernel_trace() {  # FUNCTION ARGS...
  local fn=$1
  shift
  echo "p:dprobe_oracle/oracle_$fn $program:$(file_offset "$fn") $*" >> $tracing/uprobe_events || return 1
  echo > $tracing/trace
  echo 1 > $tracing/events/dprobe_oracle/enable
  "$program" > /dev/null
  echo 0 > $tracing/events/dprobe_oracle/enable
  grep -v '^#' $tracing/trace | arguments
  echo "-:dprobe_oracle/oracle_$fn" >> $tracing/uprobe_events
}

dprobe_trace() {  # FUNCTION ARGS...
  local fn=$1
  shift
  "$dprobe" run -e "p:dprobe_oracle/oracle_$fn $fn $*" -- "$program" | arguments
}

cases=(
  "ov_ints a=%di:s32 b=%si:s64 c=%dx:u32 d=%cx:s16 ax=%di:x32 bx=%si:x64"
  "ov_ints a8=%di:s8 a16=%di:u16 c8=%dx:u8 d64=%cx:x16"
  "ov_string text=+0(%di):string mark=%si:char first=+0(%di):u8 second=+1(%di):s8"
  "ov_string text4=+0(%di):u8[4] comm=\$comm"
  "ov_record u8=+0(%di):u8 s16=+2(%di):s16 u32=+4(%di):x32 s64=+8(%di):s64 tag=+16(%di):char"
  "ov_record flags=+20(%di):u32 lo=+20(%di):b4@1/32 hi=+20(%di):b3@5/32 values=+24(%di):u32[4]"
  "ov_record name=+0(+40(%di)):string n0=+0(+40(%di)):x8 deep=+0(+0(+40(%di))):u8"
)

passed=0 failed=0
for c in "${cases[@]}"; do
  fn=${c%% *}
  args=${c#* }
  expected=$(kernel_trace "$fn" $args)
  actual=$(dprobe_trace "$fn" $args)
  if [ -n "$expected" ] && [ "$expected" == "$actual" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "DIFFERS: $c"
    diff <(echo "$expected") <(echo "$actual") | sed 's/^/  /'
  fi
done
echo > $tracing/uprobe_events
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
