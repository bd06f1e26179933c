#!/usr/bin/env bash
# The kernel as the oracle of SDT probe points: each point's sites, once
# through uprobe_events (at the note's file offset, with the semaphore as
# its reference counter, the arguments `dprobe check` made of the note's
# operands) and once through `dprobe run -e 'p OBJ:%sdt_PROVIDER:NAME'`;
# every hit's event and arguments must print the same, in the same order.
# Needs root and tracefs; otherwise it says why and is skipped (77).
#   usage: run_sdt.sh path/to/dprobe path/to/sdt_points path/to/ret_exceptions
set -uo pipefail
dprobe=${1:?dprobe}
points=${2:?sdt_points}
exceptions=${3:?ret_exceptions}
tracing=/sys/kernel/tracing

source "$(dirname "$0")/lib.sh"
require_uprobe_events $tracing

python=/usr/bin/python3.11
libstdcxx=$(readlink -f "/usr/lib/$(gcc -print-multiarch)/libstdc++.so.6")
work=$(mktemp -d)
trap 'rm -rf "$work"; echo > $tracing/uprobe_events' EXIT
cat > "$work/calls.py" <<'PY'
import gc
def visited(x):
    return x + 1
def numbers(n):
    yield from range(n)
print(sum(map(visited, numbers(23))))
gc.collect()
PY

# "EVENT ARGS" of each hit: the line after its comm, tid, cpu, time and
# location (the kernel's 0xADDR, dprobe's SYM+0xOFF/0xSIZE, which a C++
# name's brackets and spaces are part of).
hits() { sed -n -E 's/^.*: (oracle[a-z0-9_]*): \((0x[0-9a-f]+|.*\+0x[0-9a-f]+\/0x[0-9a-f]+)\) ?/\1 /p'; }

# The uprobe_events lines of every site of POINT in OBJECT: the note's
# address and semaphore as file offsets, the arguments as `check` writes
# them for that site.
kernel_lines() {  # OBJECT POINT EXECUTABLE ARGS...
  local object=$1 point=$2 exe=$3
  shift 3
  paste -d' ' \
    <("$dprobe" list "$object:$point" | while read -r address _ _; do
        local line semaphore
        line=$(file_offset_of_vaddr "$object" "${address#0x}")
        semaphore=$("$dprobe" list "$object:$point" | awk -v a="$address" \
          '$1 == a && $NF ~ /\]$/ {sub(/\]$/, "", $NF); print $NF}')
        [ -n "$semaphore" ] && line="$line($(file_offset_of_vaddr "$object" "${semaphore#0x}"))"
        echo "$object:$line"
      done) \
    <("$dprobe" check -x "$exe" -e "p:dprobe_oracle/oracle $object:$point $*" |
      awk '{ $2 = ""; print }')
}

# Event names and arguments of the hits under the kernel.
kernel_trace() {  # OBJECT POINT COMMAND ARGS...
  local object=$1 point=$2 command=$3 args=$4
  kernel_lines "$object" "$point" "${command%% *}" $args |
    awk '{ print $2 " " $1 substr($0, length($1) + length($2) + 2) }' >> $tracing/uprobe_events || return 1
  echo > $tracing/trace
  echo 1 > $tracing/events/dprobe_oracle/enable
  PYTHONHASHSEED=0 $command > /dev/null 2>&1
  echo 0 > $tracing/events/dprobe_oracle/enable
  grep -v '^#' $tracing/trace | hits
  echo > $tracing/uprobe_events
}

dprobe_trace() {  # OBJECT POINT COMMAND ARGS...
  local object=$1 point=$2 command=$3 args=$4
  PYTHONHASHSEED=0 "$dprobe" run -e "p:dprobe_oracle/oracle $object:$point $args" -- $command | hits
}

cases=(
  "$points|%sdt_dprobe_test:values|$points 7|"
  "$points|%sdt_dprobe_test:text|$points 7|w=+0(\$arg1):string \$arg2 \$arg3:x32"
  "$points|%sdt_dprobe_test:guarded|$points 7|"
  "$points|%sdt_dprobe_test:twice|$points 7|"
  # The exception object is on the heap, where it moves from run to run:
  # its type's name (std::type_info's second word) does not.
  "$libstdcxx|%sdt_libstdcxx:throw|$exceptions direct 7|type=+0(+8(\$arg2)):string"
  "$libstdcxx|%sdt_libstdcxx:catch|$exceptions rethrow 4|type=+0(+8(\$arg2)):string"
)
# The JVM's own points (libjvm.so, loaded by dlopen): which classes load
# is the same on every run of `java -version` (the order across its
# threads not: they compare sorted); which threads it starts is not (a
# compiler thread comes or not), so thread__start is not compared.
java=$(readlink -f "$(command -v java)" 2>/dev/null)
libjvm=$(readlink -f "$(dirname "$java")/../lib/server/libjvm.so" 2>/dev/null)
if [ -x "$java" ] && [ -f "$libjvm" ]; then
  cases+=(
    "$libjvm|%sdt_hotspot:class__loaded|$java -Xshare:auto -version|length=\$arg2 shared=\$arg4|sorted"
  )
fi
if [ -x $python ]; then
  cases+=(
    "$python|%sdt_python:function__return|$python -S $work/calls.py|func=+0(\$arg2):string line=\$arg3"
    "$python|%sdt_python:function__entry|$python -S $work/calls.py|func=+0(\$arg2):string"
    "$python|%sdt_python:gc__start|$python -S $work/calls.py|"
  )
fi

passed=0 failed=0
for c in "${cases[@]}"; do
  IFS='|' read -r object point command args order <<< "$c"
  expected=$(kernel_trace "$object" "$point" "$command" "$args")
  actual=$(dprobe_trace "$object" "$point" "$command" "$args")
  if [ "$order" = sorted ]; then
    expected=$(sort <<< "$expected")
    actual=$(sort <<< "$actual")
  fi
  if [ -n "$expected" ] && [ "$expected" == "$actual" ]; then
    passed=$((passed + 1))
    echo "same: $point ($(echo "$expected" | wc -l) hits)"
  else
    failed=$((failed + 1))
    echo "DIFFERS: $point $args"
    diff <(echo "$expected") <(echo "$actual") | head -20 | sed 's/^/  /'
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
