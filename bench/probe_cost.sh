#!/usr/bin/env bash
# Per-hit cost of a probe on the same function, side by side in one run:
#   no probe | dprobe breakpoint probe | the kernel's uprobe
# each with two register fetches (a=%di b=%si), as ns per call and ratios.
# The kernel column needs root and tracefs; without them it says why.
#   usage: bench/probe_cost.sh [CALLS]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000000}
program=$PWD/build/bench/hit_loop
dprobe=$PWD/build/dprobe
tracing=/sys/kernel/tracing

best_of() {  # the best of 3 runs damps the noise of a shared machine
  local best=""
  for _ in 1 2 3; do
    local v
    v=$("$@" | tail -1)
    if [ -z "$best" ] || awk "BEGIN{exit !($v < $best)}"; then best=$v; fi
  done
  echo "$best"
}

plain=$(best_of "$program" "$calls")
floor=$(best_of "$PWD/build/bench/trap_floor" "$calls")
with_dprobe=$(best_of "$dprobe" run -e 'p:bench/target bench_target a=%di b=%si' -o /dev/null \
  -- "$program" "$calls")

kernel="n/a"
reason=""
if [ "$(id -u)" -ne 0 ]; then
  reason="not root"
else
  [ -e $tracing/uprobe_events ] || mount -t tracefs nodev $tracing 2>/dev/null || true
  if [ -w $tracing/uprobe_events ]; then
    vaddr=$(nm "$program" | awk '$3 == "bench_target" {print $1}')
    # File offset of the symbol, through the executable segment holding it.
    offset=""
    while read -r _ off va _ filesz _; do
      if (( 16#$vaddr >= va && 16#$vaddr < va + filesz )); then
        offset=$(printf '0x%x' $(( 16#$vaddr - va + off )))
        break
      fi
    done < <(readelf -lW "$program" | awk '$1 == "LOAD" {print $1, $2, $3, $4, $5, $6}')
    echo "p:dprobe_bench/target $program:$offset a=%di b=%si" >> $tracing/uprobe_events
    echo 1 > $tracing/events/dprobe_bench/target/enable
    kernel=$(best_of "$program" "$calls")
    echo 0 > $tracing/events/dprobe_bench/target/enable
    echo "-:dprobe_bench/target" >> $tracing/uprobe_events
    echo > $tracing/trace
  else
    reason="no writable $tracing/uprobe_events"
  fi
fi

awk -v f="$floor" -v p="$plain" -v d="$with_dprobe" -v k="$kernel" -v r="$reason" -v n="$calls" 'BEGIN {
  printf "calls per run: %d (best of 3 runs)\n", n
  printf "%-34s %10s %12s\n", "", "ns/call", "added ns/hit"
  printf "%-34s %10.1f %12s\n", "no probe", p, "-"
  printf "%-34s %10.1f %12.1f\n", "dprobe breakpoint probe", d, d - p
  printf "%-34s %10s %12.1f\n", "(int3 + empty signal handler)", "", f
  if (k == "n/a") { printf "%-34s %10s   (%s)\n", "kernel uprobe", "n/a", r; exit }
  printf "%-34s %10.1f %12.1f\n", "kernel uprobe", k, k - p
  printf "ratio dprobe / kernel (added cost): %.2f  (target: <= 0.25)\n", (d - p) / (k - p)
  printf "ratio signal floor / kernel:        %.2f\n", f / (k - p)
}'
