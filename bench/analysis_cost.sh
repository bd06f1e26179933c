#!/usr/bin/env bash
# Per-hit cost of the analysis done where the hit happens (--filter,
# --trigger hist, --stacktrace), side by side in one run, on the same
# jump-optimized entry probe of bench_leaf (bench/programs/analysis_loop.c,
# built without frame pointers, called at the bottom of a chain of noinline
# functions):
#   untraced | plain recorded hit (size=%di:u64) | the same with a filter
#   that turns every hit away, and with one that passes every hit | hists
#   keyed on size.log2, on a string (name=+0(%si):string), on both | the
#   user stack recorded (--stacktrace), and a hist keyed on stacktrace
# as ns of CPU time per call of the traced thread (the bursts only), and
# the ratios issue 15 sets: a filtered-out or hist-aggregated hit costs at
# most 1.5x the plain recorded hit (added ns over untraced, as
# bench/probe_cost.sh compares), a stack of depth 10 adds at most 1 us.
# The string-keyed rows compare with a plain hit that fetches the string
# too, so that only the analysis differs.
# The chain is as long as makes the recorded stack DEPTH frames (default
# 10, pcs[0] the probed address included, down to _start), whatever the C
# library adds under main: measured first with a short traced run.
# Calls come in bursts (BURST, default 1000) with 2 ms pauses between, so
# that the reader keeps up and every recorded hit writes its record (a lost
# hit is cheaper: the "lossy" column counts the runs that lost any, left
# out of the row's figures unless every run did). Every row runs once
# per round, ROUNDS rounds (default 5), and shows the least and the median:
# the rounds interleave so a change in the machine's load falls on every
# row alike. Run it on a quiet machine (no build or test alongside: with
# two cores, another job takes the reader's core and the caches, and a few
# ns are the whole difference between the rows); about 30 s.
#   usage: [BURST=N] [ROUNDS=N] [DEPTH=N] bench/analysis_cost.sh [CALLS]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200000}
burst=${BURST:-1000}
rounds=${ROUNDS:-5}
depth=${DEPTH:-10}
program=$PWD/build/bench/analysis_loop
dprobe=$PWD/build/dprobe
# The default ring, which a burst of stack records (some 150 bytes each)
# fits in; the untimed calls first go once round it: its first-touch page
# faults (a few ns a hit at these CALLS; 16M would cost about 20 ns a
# hit) are not a hit's cost, and the aggregated rows would not pay them.
# They also give the unwinder its first look at each frame.
buffer=1M
warmup=40000
plain_def='p:b/f bench_leaf size=%di:u64'
string_def='p:b/f bench_leaf size=%di:u64 name=+0(%si):string'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The frames of the recorded stack of a one-call run with CHAIN (through a
# file: a reader that stops early would make the pipe fail).
stack_frames() {
  "$dprobe" run -e "$plain_def" --stacktrace b/f -o "$work/stack" -- "$program" 1 0 "$1" > /dev/null
  awk '/<user stack trace>/ {on = 1; next} on && /^ => / {n++; next} on {exit} END {print n + 0}' \
    "$work/stack"
}

base=$(stack_frames 0)
chain=$((depth - base))
if [ "$chain" -lt 0 ] || [ "$chain" -gt 16 ]; then
  echo "analysis_cost: main's stack has $base frames; DEPTH=$depth needs a chain of $chain (0 to 16)" >&2
  exit 1
fi
frames=$(stack_frames "$chain")
"$dprobe" run --probes -e "$plain_def" -o /dev/null -- "$program" 1 0 0 > /dev/null 2> "$work/probes"
if ! grep -q 'bench_leaf.*\[OPTIMIZED\]' "$work/probes"; then
  echo "analysis_cost: the probe on bench_leaf is not jump-optimized; the goals are for optimized probes" >&2
  exit 1
fi

# name|DEFINITION|OPTION... (a row: its label, then dprobe's arguments;
# untraced runs the program alone).
rows=(
  "untraced call|"
  "plain recorded hit|$plain_def"
  "filtered out (size > 1000000000)|$plain_def|--filter|b/f:size > 1000000000"
  "filter passes (size < 1000000000)|$plain_def|--filter|b/f:size < 1000000000"
  "hist keys=size.log2|$plain_def|--trigger|b/f:hist:keys=size.log2"
  "plain recorded hit, with the string|$string_def"
  "hist keys=name (string)|$string_def|--trigger|b/f:hist:keys=name"
  "hist keys=name,size.log2|$string_def|--trigger|b/f:hist:keys=name,size.log2"
  "stack recorded (--stacktrace)|$plain_def|--stacktrace|b/f"
  "hist keys=stacktrace|$plain_def|--trigger|b/f:hist:keys=stacktrace"
)

run_row() {  # INDEX: one run of a row; "NS LOST" appended to $work/INDEX
  local IFS='|' fields ns lost=0
  read -r -a fields <<< "${rows[$1]}"
  if [ "${#fields[@]}" -lt 2 ] || [ -z "${fields[1]}" ]; then
    "$program" "$calls" "$burst" "$chain" "$warmup" > "$work/out" 2> "$work/err" || true
  else
    "$dprobe" run --profile --buffer-size "$buffer" -e "${fields[1]}" "${fields[@]:2}" \
      -o /dev/null -- "$program" "$calls" "$burst" "$chain" "$warmup" > "$work/out" 2> "$work/err" || true
    # --profile's line: event, hits, misses (lost), filtered.
    lost=$(awk '$1 == "f" {print $3; found = 1} END {if (!found) print "?"}' "$work/err")
  fi
  ns=$(tail -1 "$work/out")
  if ! [[ $ns =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
    echo "analysis_cost: the run of \"${fields[0]}\" printed no time:" >&2
    cat "$work/err" >&2
    exit 1
  fi
  echo "$ns $lost" >> "$work/$1"
}

for ((round = 0; round < rounds; round++)); do
  for i in "${!rows[@]}"; do run_row "$i"; done
done

# Each row's least and median ns, over the runs that lost no hit when
# there are some (a run that lost hits skipped part of the work), and how
# many runs lost hits.
for i in "${!rows[@]}"; do
  label=${rows[$i]%%|*}
  stats=$(awk '{ns[NR] = $1; lost[NR] = $2; if ($2 == "0") clean++}
    END {
      for (i = 1; i <= NR; i++) if (!clean || lost[i] == "0") v[++n] = ns[i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "%s|%s|%d/%d", v[1], m, NR - clean, NR
    }' "$work/$i")
  printf '%s|%s\n' "$label" "$stats"
done | awk -F'|' -v n="$calls" -v b="$burst" -v r="$rounds" -v d="$frames" -v c="$chain" '
{ name[NR] = $1; least[NR] = $2; median[NR] = $3; lost[NR] = $4 }
END {
  printf "calls per run: %d in bursts of %d; %d rounds; stack depth %d frames (a chain of %d)\n", n, b, r, d, c
  printf "%-38s %9s %9s %9s %6s\n", "", "ns/call", "median", "added ns", "lossy"
  for (i = 1; i <= NR; i++) {
    if (i == 1) printf "%-38s %9.1f %9.1f %9s %6s\n", name[i], least[i], median[i], "-", "-"
    else printf "%-38s %9.1f %9.1f %9.1f %6s\n", name[i], least[i], median[i], least[i] - least[1], lost[i]
  }
  u = least[1]; p = least[2] - u; ps = least[6] - u
  printf "filtered out / plain (added ns)          = %.2f  (target: <= 1.5)\n", (least[3] - u) / p
  printf "filter passes / plain (added ns)         = %.2f\n", (least[4] - u) / p
  printf "hist size.log2 / plain (added ns)        = %.2f  (target: <= 1.5)\n", (least[5] - u) / p
  printf "hist name / plain with string            = %.2f  (target: <= 1.5)\n", (least[7] - u) / ps
  printf "hist name,size.log2 / plain with string  = %.2f  (target: <= 1.5)\n", (least[8] - u) / ps
  printf "stack of depth %d, added to the plain hit = %.1f ns  (target: <= 1000)\n", d, least[9] - least[2]
  printf "hist keyed on the stack / stack recorded = %.2f  (target: <= 1.5)\n", (least[10] - u) / (least[9] - u)
  printf "hist keyed on the stack / plain          = %.2f  (the unwind: %.1f ns over the plain hit)\n", (least[10] - u) / p, least[10] - least[2]
  for (i = 2; i <= NR; i++) if (lost[i] !~ /^0\//) {
    printf "lossy: runs that lost hits (left out of a row that has runs without); a lost hit\n"
    printf "costs less: on a busy machine the reader falls behind, lower BURST\n"; break
  }
}'
