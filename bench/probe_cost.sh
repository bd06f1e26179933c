#!/usr/bin/env bash
# Per-call cost of probes on the same function, side by side in one run:
#   no probe | dprobe entry and return probes, jump-optimized (the default)
#   and as breakpoints (--no-optimize) | the kernel's uprobe and uretprobe
#   with the same fetches
# as ns of CPU time per call and ratios (4 threads: each one's). The
# kernel rows need root and tracefs; without
# them they say why. The floor of any signal-based breakpoint (an int3 into
# an empty SIGTRAP handler) is measured alongside.
# Calls come in bursts (BURST, default 2000) with 2 ms pauses between, so
# that dprobe's reader keeps up and every hit writes its record; BURST=0
# runs them back to back, where rings fill and most hits count a loss.
#   usage: [BURST=N] bench/probe_cost.sh [CALLS]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000000}
burst=${BURST:-2000}
program=$PWD/build/bench/hit_loop
dprobe=$PWD/build/dprobe
tracing=/sys/kernel/tracing

best_of() {  # the best of 5 runs damps the noise of a shared machine
  local best=""
  for _ in 1 2 3 4 5; do
    local v
    v=$("$@" | tail -1)
    if [ -z "$best" ] || awk "BEGIN{exit !($v < $best)}"; then best=$v; fi
  done
  echo "$best"
}

dprobe_run() {  # DEFINITION [OPTION]
  best_of "$dprobe" run -e "$1" ${2:+"$2"} -o /dev/null -- "$program" "$calls" "${threads:-1}" "$burst"
}

# File offset of bench_target, through the executable segment holding it.
file_offset() {
  local vaddr
  vaddr=$(nm "$program" | awk '$3 == "bench_target" {print $1}')
  while read -r off va filesz; do
    if (( 16#$vaddr >= va && 16#$vaddr < va + filesz )); then
      printf '0x%x' $(( 16#$vaddr - va + off ))
      return
    fi
  done < <(readelf -lW "$program" | awk '$1 == "LOAD" {print $2, $3, $5}')
}

kernel_run() {  # DEFINITION: the kernel's probe on bench_target, then a run
  echo "$1" >> $tracing/uprobe_events
  echo 1 > $tracing/events/dprobe_bench/enable
  best_of "$program" "$calls" 1 "$burst"
  echo 0 > $tracing/events/dprobe_bench/enable
  echo "-:dprobe_bench/target" >> $tracing/uprobe_events
  echo > $tracing/trace
}

plain=$(best_of "$program" "$calls" 1 "$burst")
floor=$(best_of "$PWD/build/bench/trap_floor" "$calls")
entry=$(dprobe_run 'p:bench/target bench_target a=%di b=%si')
ret=$(dprobe_run 'r:bench/target bench_target rv=$retval a=$arg1')
bp_entry=$(dprobe_run 'p:bench/target bench_target a=%di b=%si' --no-optimize)
# Four threads hitting the same probe: CPU time per call, each.
plain4=$(best_of "$program" "$calls" 4 "$burst")
entry4=$(threads=4 dprobe_run 'p:bench/target bench_target a=%di b=%si')
bp_ret=$(dprobe_run 'r:bench/target bench_target rv=$retval a=$arg1' --no-optimize)

kentry="n/a" kret="n/a" reason=""
if [ "$(id -u)" -ne 0 ]; then
  reason="not root"
else
  [ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null || true
  if [ -w $tracing/uprobe_events ] && [ ! -s $tracing/uprobe_events ]; then
    offset=$(file_offset)
    kentry=$(kernel_run "p:dprobe_bench/target $program:$offset a=%di b=%si")
    kret=$(kernel_run "r:dprobe_bench/target $program:$offset rv=\$retval")
  else
    reason="no free, writable $tracing/uprobe_events"
  fi
fi

awk -v f="$floor" -v p="$plain" -v e="$entry" -v r="$ret" -v be="$bp_entry" -v br="$bp_ret" \
    -v p4="$plain4" -v e4="$entry4" -v ke="$kentry" -v kr="$kret" \
    -v why="$reason" -v n="$calls" -v b="$burst" 'BEGIN {
  printf "calls per run: %d in bursts of %d (0: back to back), best of 5 runs\n", n, b
  printf "%-40s %10s %12s\n", "", "ns/call", "added ns"
  printf "%-40s %10.1f %12s\n", "no probe", p, "-"
  printf "%-40s %10.1f %12.1f\n", "dprobe entry probe (optimized)", e, e - p
  printf "%-40s %10.1f %12.1f\n", "dprobe return probe (optimized entry)", r, r - p
  printf "%-40s %10s %12.1f\n", "  of which the return path", "", r - e
  printf "%-40s %10.1f %12.1f\n", "dprobe entry probe (optimized, 4 threads)", e4, e4 - p4
  printf "%-40s %10.1f %12.1f\n", "dprobe entry probe (breakpoint)", be, be - p
  printf "%-40s %10.1f %12.1f\n", "dprobe return probe (breakpoint entry)", br, br - p
  printf "%-40s %10s %12.1f\n", "int3 + empty signal handler (floor)", "", f
  if (ke == "n/a") { printf "%-40s %10s   (%s)\n", "kernel uprobe / uretprobe", "n/a", why; exit }
  printf "%-40s %10.1f %12.1f\n", "kernel uprobe", ke, ke - p
  printf "%-40s %10.1f %12.1f\n", "kernel uretprobe", kr, kr - p
  printf "entry, optimized:   dprobe / kernel = %.3f  (target: <= 25 ns added)\n", (e - p) / (ke - p)
  printf "entry, 4 threads / 1 thread = %.2f  (target <= 1.5)\n", (e4 - p4) / (e - p)
  printf "entry, breakpoint:  dprobe / kernel = %.2f  (signal floor / kernel = %.2f)\n", (be - p) / (ke - p), f / (ke - p)
  printf "return, optimized:  dprobe / kernel = %.3f  (target: <= 40 ns added)\n", (r - p) / (kr - p)
}'
