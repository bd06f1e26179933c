#!/usr/bin/env bash
# The kernel as the oracle of event filters: the same probes and the same
# filter, on the same program (tests/programs/analysis.c), once through the
# kernel's uprobe_events and events/GRP/EVENT/filter and once through
# `dprobe run --filter`; the arguments of every hit that passed must print
# the same, event by event (so the counts agree too). The filters that
# name the process (common_pid == PID) run the program in its wait mode,
# and dprobe through `attach`, so that the pid is known before the filter
# is set. The same for the system call events (the kernel's
# events/syscalls/*/filter and `dprobe run -e syscalls:...`) on
# tests/programs/syscall_calls.c, when given. Needs root and tracefs;
# otherwise it says why and is skipped (77). Everything it changes in
# tracefs is put back, on failure too.
#   usage: run_filters.sh path/to/dprobe path/to/analysis_O2 [path/to/syscall_calls_O2]
set -uo pipefail
dprobe=${1:?dprobe}
program=${2:?program}
syscall_program=${3:-}
tracing=/sys/kernel/tracing
group=dprobe_filter

if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to use uprobe_events"; exit 77; fi
[ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null
if [ ! -w $tracing/uprobe_events ]; then echo "SKIP: no writable $tracing/uprobe_events"; exit 77; fi
if [ -s $tracing/uprobe_events ]; then echo "SKIP: uprobe_events is in use"; exit 77; fi

work=$(mktemp -d /tmp/dprobe-filters-XXXXXX) || exit 1
# A copy of its own, under the same name (the same comm): a uprobe is on
# the file, so other runs of the program (the integration tests, run
# alongside) do not hit the kernel's probes.
cp "$program" "$work/" || exit 1
program=$work/$(basename "$program")
tracing_on=$(cat $tracing/tracing_on)
background=()
syscall_events=()  # the syscall events this script enabled and filtered

# Whatever happens: the programs started here stopped, our events disabled,
# their filters cleared and removed, tracing_on as it was.
restore() {
  local pid
  for pid in "${background[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
  if [ -d $tracing/events/$group ]; then
    echo 0 > $tracing/events/$group/enable 2>/dev/null
    for filter in $tracing/events/$group/*/filter; do
      [ -e "$filter" ] && echo 0 > "$filter" 2>/dev/null
    done
  fi
  echo > $tracing/uprobe_events 2>/dev/null
  for event in "${syscall_events[@]}"; do
    echo 0 > $tracing/events/syscalls/$event/enable 2>/dev/null
    echo 0 > $tracing/events/syscalls/$event/filter 2>/dev/null
  done
  echo "$tracing_on" > $tracing/tracing_on 2>/dev/null
  rm -rf "$work"
}
trap restore EXIT
trap 'exit 130' INT TERM
echo 1 > $tracing/tracing_on

source "$(dirname "$0")/lib.sh"

# The file offset of a function, as uprobe_events wants it.
file_offset() { file_offset_in "$program" "$1"; }

# The arguments of each trace line: everything after "(location) ".
arguments() { sed -n 's/^.*: flt_[a-z0-9_]*: ([^)]*) //p'; }

# Polls (every 10 ms, at most 20 s) until `grep -q PATTERN FILE` holds.
wait_for() {  # PATTERN FILE
  local i
  for ((i = 0; i < 2000; i++)); do
    grep -q "$1" "$2" 2>/dev/null && return 0
    sleep 0.01
  done
  echo "timed out waiting for '$1' in $2" >&2
  return 1
}

# The program in its wait mode, in the background: its pid in $waiting.
start_waiting() {
  # Emptied first: the last run's "ready" must not be taken for this one's.
  : > "$work/program.out"
  "$program" 1 wait > "$work/program.out" &
  waiting=$!
  background+=("$waiting")
  wait_for "analysis: ready" "$work/program.out"
}

# Lets the waiting program make its calls and end.
release_waiting() {
  kill -USR1 "$waiting" && wait_for "analysis: worked" "$work/program.out" &&
    kill -USR1 "$waiting" && wait "$waiting"
}

kernel_trace() {  # PIDMODE FUNCTION "ARGS" "FILTER"
  local mode=$1 fn=$2 args=$3 filter=$4 event=$tracing/events/$group/flt_$2
  echo "p:$group/flt_$fn $program:$(file_offset "$fn") $args" >> $tracing/uprobe_events || return 1
  [ "$mode" = pid ] && { start_waiting || return 1; filter=${filter//PID/$waiting}; }
  if ! echo "$filter" > "$event/filter"; then
    echo "the kernel refuses '$filter':" >&2
    grep -v '^$' $tracing/error_log | tail -3 >&2
    return 1
  fi
  echo > $tracing/trace
  echo 1 > "$event/enable"
  if [ "$mode" = pid ]; then release_waiting; else "$program" > /dev/null; fi
  echo 0 > "$event/enable"
  grep -v '^#' $tracing/trace | arguments
  echo 0 > "$event/filter"
  echo "-:$group/flt_$fn" >> $tracing/uprobe_events
}

dprobe_trace() {  # PIDMODE FUNCTION "ARGS" "FILTER"
  local mode=$1 fn=$2 args=$3 filter=$4
  local definition="p:$group/flt_$fn $fn $args"
  if [ "$mode" != pid ]; then
    "$dprobe" run -e "$definition" --filter "$group/flt_$fn:$filter" -- "$program" | arguments
    return
  fi
  start_waiting || return 1
  # Emptied first, as the program's output: the last case's listing of the
  # same function must not be taken for this one's (the redirection below
  # empties the file only once the shell forked).
  : > "$work/attach.err"
  "$dprobe" attach -p "$waiting" -e "$definition" --filter "$group/flt_$fn:${filter//PID/$waiting}" \
    --probes > "$work/attach.out" 2> "$work/attach.err" &
  local attach=$!
  background+=("$attach")
  # --probes lists the probe once the agent armed it.
  wait_for "$fn+0x0/" "$work/attach.err" || { cat "$work/attach.err" >&2; return 1; }
  release_waiting || return 1
  wait "$attach" || { cat "$work/attach.err" >&2; return 1; }
  arguments < "$work/attach.out"
}

# The system call events see the whole system: the kernel's filter is
# narrowed to the program's pid, and its lines are compared from the call's name on, without the path's
# address (another on every run). The dynamic loader's calls, which the
# kernel sees and dprobe does not (it starts after them), pass none of the
# filters below.
syscall_line() { sed -n 's/^.*: \(sys_[a-z0-9_]*[( ].*\)$/\1/p' | sed 's/filename: 0x[0-9a-f]*/filename: ADDR/'; }

kernel_syscall_trace() {  # EVENT "FILTER"
  local event=$tracing/events/syscalls/$1
  syscall_events+=("$1")
  # Started, but stopped until its filter is in place (its shell's own
  # calls, the redirection, made before), so that the filter can name its
  # pid: other runs of the program are not ours.
  (kill -STOP $BASHPID && exec "$syscall_program" known) > /dev/null &
  local held=$! i
  background+=("$held")
  for ((i = 0; i < 2000; i++)); do
    [ "$(awk '{print $3}' /proc/$held/stat 2>/dev/null)" = T ] && break
    sleep 0.01
  done
  if ! echo "($2) && common_pid == $held" > "$event/filter"; then
    echo "the kernel refuses '$2':" >&2
    grep -v '^$' $tracing/error_log | tail -3 >&2
    return 1
  fi
  echo > $tracing/trace
  echo 1 > "$event/enable"
  kill -CONT "$held"
  wait "$held"
  echo 0 > "$event/enable"
  echo 0 > "$event/filter"
  grep -v '^#' $tracing/trace | syscall_line
}

dprobe_syscall_trace() {  # EVENT "FILTER"
  "$dprobe" run -e "syscalls:$1" --filter "syscalls/$1:$2" -- "$syscall_program" known | syscall_line
}

# A syscall event someone else uses is left alone (and its cases skipped).
syscall_event_free() {
  local event=$tracing/events/syscalls/$1
  [ -e "$event/filter" ] && [ "$(cat "$event/enable")" = 0 ] && [ "$(cat "$event/filter")" = none ]
}

take_args='size=%di:u64 tag=+0(%si):string s=%di:s8'
nap_args='ms=%di:s64'
# MODE|FUNCTION|ARGS|FILTER; take(size, tag) is called for size = 1..300,
# `size % 7 + 1` times, tag "alpha" when size is even, "beta" otherwise,
# by a thread of the program (not its main thread); nap(ms) by main, with
# 10, 10 and 40. s is size as an s8: negative for 128..255.
cases=(
  # Numbers: each comparison.
  "run|take|$take_args|size == 150"
  "run|take|$take_args|size != 150 && size < 5"
  "run|take|$take_args|size < 3"
  "run|take|$take_args|size <= 3"
  "run|take|$take_args|size > 297"
  "run|take|$take_args|size >= 298"
  "run|take|$take_args|size & 256"
  "run|take|$take_args|size & 0x81 && size < 140"
  "run|take|$take_args|size == 0x12c"
  # Signed fields.
  "run|take|$take_args|s < -125"
  "run|take|$take_args|s == -1"
  "run|take|$take_args|s >= -2 && s <= 1"
  "run|take|$take_args|s > 125"
  "run|nap|$nap_args|ms > 10"
  "run|nap|$nap_args|ms != -40"
  # Strings: ==, != and each kind of glob.
  "run|take|$take_args|tag == \"alpha\" && size < 20"
  "run|take|$take_args|tag != \"alpha\" && size < 20"
  "run|take|$take_args|tag ~ \"al*\" && size < 20"
  "run|take|$take_args|tag ~ \"*ta\" && size < 20"
  "run|take|$take_args|tag ~ \"*lph*\" && size < 20"
  "run|take|$take_args|tag ~ \"?e[st]a\" && size < 20"
  "run|take|$take_args|tag ~ \"b*a\" && size < 20"
  "run|take|$take_args|tag ~ \"beta\" && size < 20"
  "run|take|$take_args|tag == \"alp\" || size == 7"
  # comm and common_pid.
  "run|take|$take_args|comm == \"analysis_O2\" && size < 4"
  "run|take|$take_args|comm ~ \"analysis*\" && size < 4"
  "run|take|$take_args|comm != \"analysis_O2\" || size == 5"
  "run|take|$take_args|common_pid > 0 && size < 4"
  "run|take|$take_args|common_pid < 0 || size == 6"
  # && || ! and parentheses.
  "run|take|$take_args|size < 3 || size > 298"
  "run|take|$take_args|!(size > 2)"
  "run|take|$take_args|(size < 3 || size > 298) && tag == \"alpha\""
  "run|take|$take_args|!(tag == \"alpha\" || size > 9)"
  "run|take|$take_args|size > 10 && (size < 13 || (tag ~ \"b*\" && size < 16))"
  "run|take|$take_args|((size == 1)) || !(!(size == 300))"
  "run|take|$take_args|size < 3 && tag == \"beta\" || size == 4"
  # common_pid is the thread (the kernel's current->pid): take runs on a
  # thread of its own, nap on the main thread, whose id is the process's.
  "pid|nap|$nap_args|common_pid == PID"
  "pid|take|$take_args|common_pid != PID && size < 4"
  "pid|take|$take_args|common_pid == PID || size == 1"
)
# syscall_calls known: openat("/dev/null", O_RDONLY | O_CLOEXEC) (fd 3),
# then openat of a missing path, O_RDONLY (-ENOENT). ret is a signed long.
syscall_cases=(
  "sys_enter_openat|flags == 0"
  "sys_enter_openat|!(flags & 0x80000)"
  "sys_enter_openat|flags < 1 && dfd == 0xffffff9c"
  "sys_exit_openat|ret < 0"
  "sys_exit_openat|ret == -2"
  "sys_exit_openat|ret < 0 || ret > 100"
)

# The kernel's lines ($work/expected) against dprobe's ($work/actual).
passed=0 failed=0
compare() {  # WHAT
  expected=$(cat "$work/expected")
  actual=$(cat "$work/actual")
  if [ -n "$expected" ] && [ "$expected" == "$actual" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "DIFFERS: $1 ($(echo -n "$expected" | grep -c '') lines from the kernel," \
      "$(echo -n "$actual" | grep -c '') from dprobe)"
    diff <(echo "$expected") <(echo "$actual") | head -10 | sed 's/^/  /'
  fi
}

for c in "${cases[@]}"; do
  IFS='|' read -r mode fn args filter <<< "$c"
  # Into files, not $(...): the functions run in this shell, so that the
  # programs they leave behind on a failure are the trap's to stop.
  kernel_trace "$mode" "$fn" "$args" "$filter" > "$work/expected"
  dprobe_trace "$mode" "$fn" "$args" "$filter" > "$work/actual"
  compare "$fn: $filter"
done
if [ -n "$syscall_program" ]; then
  for c in "${syscall_cases[@]}"; do
    IFS='|' read -r event filter <<< "$c"
    if ! syscall_event_free "$event"; then
      echo "SKIPPED: $event: $filter (the event is in use or missing)"
      continue
    fi
    kernel_syscall_trace "$event" "$filter" > "$work/expected"
    dprobe_syscall_trace "$event" "$filter" > "$work/actual"
    compare "$event: $filter"
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
