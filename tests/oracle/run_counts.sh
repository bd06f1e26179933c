#!/usr/bin/env bash
# The kernel as the oracle of counts: how often a deterministic program
# calls malloc, free, calloc, realloc, the IFUNCs strlen, memcpy and strcmp,
# and a function of its own, counted by the kernel's uprobes on an untraced
# run, and by dprobe's profile (`run --profile`): the probe alone, and the
# same function inside `p libc.so.6:*` (aliases one event each), jump-
# optimized and with --no-optimize; and from an attach on (`attach
# --profile`) against the kernel's events enabled at the same point. The
# counts must be equal.
# Needs root and tracefs; otherwise it says why and is skipped (77).
#   usage: run_counts.sh path/to/dprobe path/to/count_calls
set -uo pipefail
dprobe=${1:?dprobe}
program=${2:?program}
tracing=/sys/kernel/tracing

source "$(dirname "$0")/lib.sh"
require_uprobe_events $tracing

libc=$(ldd "$program" | awk '/libc.so.6/ {print $3}')
[ -n "$libc" ] || { echo "no C library found for $program"; exit 1; }
declare -A where  # IFUNC name -> file offset of its implementation here
while read -r name _ offset; do where[$name]=$offset; done < <("$program" where)

# A C library function's file offset: its default version (nm -D prints
# "malloc@@GLIBC_2.2.5").
library_offset() {  # FUNCTION
  local vaddr
  vaddr=$(nm -D --defined-only "$libc" | awk -v s="$1@@" 'index($3, s) == 1 {print $1; exit}')
  [ -n "$vaddr" ] && file_offset_of_vaddr "$libc" "$vaddr"
}

# The place the kernel probes: an IFUNC where its calls go, the rest by name.
kernel_place() {  # FUNCTION
  case $1 in
    count_calls_work) echo "$program:$(file_offset_in "$program" "$1")" ;;
    strlen | memcpy | strcmp) echo "$libc:${where[$1]}" ;;
    *) echo "$libc:$(library_offset "$1")" ;;
  esac
}

functions=(malloc free calloc realloc strlen memcpy strcmp count_calls_work)

# The kernel's probes on every function, and the tracing state they change,
# kept to be restored by remove_kernel_probes.
add_kernel_probes() {
  local fn
  saved_pid=$(cat $tracing/set_event_pid)
  saved_on=$(cat $tracing/tracing_on)
  for fn in "${functions[@]}"; do
    echo "p:dprobe_counts/$fn $(kernel_place "$fn")" >> $tracing/uprobe_events || return 1
  done
  echo > $tracing/trace
  echo 1 > $tracing/tracing_on
}

remove_kernel_probes() {
  local fn
  echo 0 > $tracing/events/dprobe_counts/enable
  echo > $tracing/trace
  echo "${saved_pid:-}" > $tracing/set_event_pid
  echo "$saved_on" > $tracing/tracing_on
  for fn in "${functions[@]}"; do echo "-:dprobe_counts/$fn" >> $tracing/uprobe_events; done
}

# The hits of FUNCTION in process PID in the trace; with FROM_EXEC 1, only
# those after its exec (ftrace names the launching shell's earlier events
# after the program too).
kernel_hits() {  # FUNCTION PID FROM_EXEC
  awk -v p="-$2\$" -v ev=" $1: " -v on=$((1 - $3)) \
    '$1 ~ p && /sched_process_exec/ {on = 1; n = 0; next} on && $1 ~ p && index($0, ev) {n++}
     END {print n + 0}' $tracing/trace
}

# The kernel's hits of every function, in one untraced run from its exec.
declare -A kernel
kernel_counts() {
  local fn pid
  add_kernel_probes || return 1
  echo 1 > $tracing/events/sched/sched_process_exec/enable
  echo 1 > $tracing/events/dprobe_counts/enable
  sh -c "echo \$\$ > $tracing/set_event_pid; exec $program" > /dev/null &
  pid=$!
  wait $pid
  echo 0 > $tracing/events/sched/sched_process_exec/enable
  for fn in "${functions[@]}"; do kernel[$fn]=$(kernel_hits "$fn" $pid 1); done
  remove_kernel_probes
}

# EVENT HITS MISSES lines of the profile, for `dprobe run OPTIONS`.
profile() {  # OPTIONS...
  "$dprobe" run --profile -o /dev/null "$@" -- "$program" 2>&1 >/dev/null
}

kernel_counts || { echo "could not set the kernel's probes"; exit 1; }

# One event per function, named after it.
alone=()
for fn in "${functions[@]}"; do
  obj=libc.so.6:
  [ "$fn" = count_calls_work ] && obj=
  alone+=(-e "p:counts/$fn $obj$fn")
done

passed=0 failed=0
check() {  # WHAT FUNCTION KERNEL_COUNT DPROBE_COUNT
  if [ "$3" == "$4" ] && [ "$3" -gt 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "DIFFERS: $1: $2: kernel $3, dprobe ${4:-none}"
  fi
}

for mode in "" --no-optimize; do
  out=$(profile $mode "${alone[@]}")
  for fn in "${functions[@]}"; do
    check "alone ${mode:-optimized}" "$fn" "${kernel[$fn]}" \
      "$(awk -v e="$fn" '$1 == e {print $2}' <<< "$out")"
  done
  out=$(profile $mode -e 'p libc.so.6:*' -e 'p:counts/count_calls_work count_calls_work')
  for fn in "${functions[@]}"; do
    event=p_${fn}_0
    [ "$fn" = count_calls_work ] && event=count_calls_work
    check "in libc.so.6:* ${mode:-optimized}" "$fn" "${kernel[$fn]}" \
      "$(awk -v e="$event" '$1 == e {print $2}' <<< "$out")"
  done
done

# From an attach on: the program waits, untraced, until a file exists,
# then makes its calls. The kernel counts from its events' enabling while
# the program waits; dprobe from its attach (--probes says when it is
# armed).
wait_for_line() {  # FILE PATTERN [SECONDS]
  for _ in $(seq 1 $((${3:-10} * 50))); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}

declare -A kernel_attached
kernel_attach_counts() {
  local fn dir=$1 pid
  add_kernel_probes || return 1
  "$program" wait "$dir/go" > "$dir/out" &
  pid=$!
  wait_for_line "$dir/out" ready || return 1
  echo "$pid" > $tracing/set_event_pid
  echo 1 > $tracing/events/dprobe_counts/enable
  touch "$dir/go"
  wait $pid
  for fn in "${functions[@]}"; do kernel_attached[$fn]=$(kernel_hits "$fn" $pid 0); done
  remove_kernel_probes
}

attach_profile() {  # DIR OPTIONS...
  local dir=$1 pid attach
  shift
  rm -f "$dir/go"
  "$program" wait "$dir/go" > "$dir/out" &
  pid=$!
  wait_for_line "$dir/out" ready || return 1
  "$dprobe" attach -p "$pid" --profile --probes -o /dev/null "$@" 2> "$dir/err" &
  attach=$!
  # As long as attach itself waits for its session to start (a machine
  # busy with the rest of the suite arms slowly).
  if ! wait_for_line "$dir/err" 'OPTIMIZED\]\|BREAKPOINT' 60; then
    echo "attach $* did not arm within 60 s:" >&2
    cat "$dir/err" >&2
    kill "$attach" "$pid" 2> /dev/null
    return 1
  fi
  touch "$dir/go"
  wait $pid
  wait $attach
  cat "$dir/err"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kernel_attach_counts "$work" || { echo "could not count the attached run in the kernel"; exit 1; }
for mode in "" --no-optimize; do
  out=$(attach_profile "$work" $mode "${alone[@]}")
  for fn in "${functions[@]}"; do
    check "attached ${mode:-optimized}" "$fn" "${kernel_attached[$fn]}" \
      "$(awk -v e="$fn" '$1 == e {print $2}' <<< "$out")"
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
