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
# Each row is its best of ROUNDS (default 5) rounds, a round running every
# row once.
#   usage: [BURST=N] [ROUNDS=N] bench/probe_cost.sh [CALLS]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000000}
burst=${BURST:-2000}
program=$PWD/build/bench/hit_loop
dprobe=$PWD/build/dprobe
tracing=/sys/kernel/tracing

rounds=${ROUNDS:-5}

# Each row keeps its least time over the rounds. A round runs every row
# once, one after the other, so that a noisy minute of a shared machine
# weighs on all rows alike, not on the few that ran in it.
declare -A best
keep() {  # ROW VALUE
  if [ -z "${best[$1]:-}" ] || awk "BEGIN{exit !($2 < ${best[$1]})}"; then best[$1]=$2; fi
}
measure() {  # ROW COMMAND...: its last line of output is ns per call
  local v
  v=$("${@:2}" | tail -1)
  keep "$1" "$v"
}

dprobe_run() {  # THREADS DEFINITION [OPTION]
  "$dprobe" run -e "$2" ${3:+"$3"} -o /dev/null -- "$program" "$calls" "$1" "$burst"
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
  "$program" "$calls" 1 "$burst"
  echo 0 > $tracing/events/dprobe_bench/enable
  echo "-:dprobe_bench/target" >> $tracing/uprobe_events
  echo > $tracing/trace
}

kernel="" reason=""
if [ "$(id -u)" -ne 0 ]; then
  reason="not root"
else
  [ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null || true
  if [ -w $tracing/uprobe_events ] && [ ! -s $tracing/uprobe_events ]; then
    kernel=$program:$(file_offset)
  else
    reason="no free, writable $tracing/uprobe_events"
  fi
fi

entry_def='p:bench/target bench_target a=%di b=%si'
ret_def='r:bench/target bench_target rv=$retval a=$arg1'
for _ in $(seq "$rounds"); do
  measure plain "$program" "$calls" 1 "$burst"
  measure floor "$PWD/build/bench/trap_floor" "$calls"
  measure entry dprobe_run 1 "$entry_def"
  measure ret dprobe_run 1 "$ret_def"
  measure bp_entry dprobe_run 1 "$entry_def" --no-optimize
  measure bp_ret dprobe_run 1 "$ret_def" --no-optimize
  # Four threads hitting the same probe: CPU time per call, each.
  measure plain4 "$program" "$calls" 4 "$burst"
  measure entry4 dprobe_run 4 "$entry_def"
  if [ -n "$kernel" ]; then
    measure kentry kernel_run "p:dprobe_bench/target $kernel a=%di b=%si"
    measure kret kernel_run "r:dprobe_bench/target $kernel rv=\$retval"
  fi
done
plain=${best[plain]} floor=${best[floor]} entry=${best[entry]} ret=${best[ret]}
bp_entry=${best[bp_entry]} bp_ret=${best[bp_ret]} plain4=${best[plain4]} entry4=${best[entry4]}
kentry=${best[kentry]:-n/a} kret=${best[kret]:-n/a}

awk -v f="$floor" -v p="$plain" -v e="$entry" -v r="$ret" -v be="$bp_entry" -v br="$bp_ret" \
    -v p4="$plain4" -v e4="$entry4" -v ke="$kentry" -v kr="$kret" \
    -v why="$reason" -v n="$calls" -v b="$burst" -v k="$rounds" 'BEGIN {
  printf "calls per run: %d in bursts of %d (0: back to back), best of %d rounds\n", n, b, k
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
