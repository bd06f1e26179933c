#!/usr/bin/env bash
# Per-call cost of tracing one system call, side by side in one run:
#   untraced | the same with Syscall User Dispatch on and no agent, the
#   call outside the dispatch's range (the kernel reads the selector) and
#   inside it (what the kernel alone adds to a call dprobe's rewritten sites
#   make: the floor) | dprobe with syscalls:sys_enter_getppid, its call site
#   rewritten into a jump to a trampoline (the default) and left on Syscall
#   User Dispatch (--no-optimize: a SIGSYS per call) | dprobe --summary
#   alone (every call counted and timed, no event) | strace -f -e
#   trace=getppid | the kernel's own syscalls/sys_enter_getppid event
# on the same loop of getppid calls (bench/programs/syscall_loop.c), as ns
# of wall time per call (strace's cost is in its own process), best of 3
# runs each, and the ratios: ns dprobe adds to a call, and how many times
# more strace adds. The kernel row needs root and tracefs (a tracefs
# instance of its own, removed at the end); without them it says why.
#   usage: bench/syscall_cost.sh [CALLS] [STRACE_CALLS]     (after scripts/build.sh)
# CALLS defaults to 200000; STRACE_CALLS, for strace's slower runs, to
# CALLS / 10.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200000}
strace_calls=${2:-$((calls / 10))}
program=$PWD/build/bench/syscall_loop
dprobe=$PWD/build/dprobe
tracing=/sys/kernel/tracing
instance=$tracing/instances/dprobe_bench_$$

best_of() {  # the best of 3 runs damps the noise of a shared machine
  local best=""
  for _ in 1 2 3; do
    local v
    v=$("$@" 2>/dev/null | tail -1)
    if [ -z "$best" ] || awk "BEGIN{exit !($v < $best)}"; then best=$v; fi
  done
  echo "$best"
}

kernel_event() {  # the kernel's event on, in an instance, for one best-of-3
  mkdir "$instance"
  trap 'echo 0 > "$instance/events/syscalls/sys_enter_getppid/enable"; rmdir "$instance"' EXIT
  echo 1 > "$instance/events/syscalls/sys_enter_getppid/enable"
  best_of "$program" "$calls"
  echo 0 > "$instance/events/syscalls/sys_enter_getppid/enable"
  rmdir "$instance"
  trap - EXIT
}

plain=$(best_of "$program" "$calls")
outside=$(SYSCALL_LOOP_DISPATCH=1 best_of "$program" "$calls")
floor=$(SYSCALL_LOOP_DISPATCH=2 best_of "$program" "$calls")
dprobe_run() {  # OPTION...: dprobe run with them, on the loop
  best_of "$dprobe" run "$@" -o /dev/null -- "$program" "$calls"
}

traced=$(dprobe_run -e syscalls:sys_enter_getppid)
dispatch=$(dprobe_run -e syscalls:sys_enter_getppid --no-optimize)
summary=$(dprobe_run --summary)
strace_ns="n/a" strace_why=""
if command -v strace > /dev/null; then
  strace_ns=$(best_of strace -f -e trace=getppid -o /dev/null "$program" "$strace_calls")
else
  strace_why="no strace (scripts/install-deps.sh installs it)"
fi

kernel="n/a" kernel_why=""
if [ "$(id -u)" -ne 0 ]; then
  kernel_why="not root"
else
  [ -d $tracing/instances ] || mount -t tracefs nodev $tracing 2>/dev/null || true
  if [ -e $tracing/events/syscalls/sys_enter_getppid ] && [ -w $tracing/instances ]; then
    kernel=$(kernel_event)
  else
    kernel_why="no tracefs with syscall events at $tracing"
  fi
fi

awk -v n="$calls" -v sn="$strace_calls" -v p="$plain" -v f="$floor" -v o="$outside" \
    -v t="$traced" -v d="$dispatch" \
    -v s="$summary" -v st="$strace_ns" -v sw="$strace_why" -v k="$kernel" -v kw="$kernel_why" '
function row(name, ns) { printf "%-48s %10.1f %12.1f\n", name, ns, ns - p }
function none(name, why) { printf "%-48s %10s   (%s)\n", name, "n/a", why }
BEGIN {
  printf "getppid calls per run: %d (strace: %d), best of 3 runs, wall time\n", n, sn
  printf "%-48s %10s %12s\n", "", "ns/call", "added ns"
  printf "%-48s %10.1f %12s\n", "untraced", p, "-"
  row("dispatch on, no agent, call outside its range", o)
  row("dispatch on, no agent, call inside (the floor)", f)
  row("dprobe sys_enter_getppid (rewritten site)", t)
  row("dprobe sys_enter_getppid (dispatch: a SIGSYS)", d)
  row("dprobe --summary (rewritten site, no event)", s)
  if (st == "n/a") none("strace -f -e trace=getppid", sw)
  else row("strace -f -e trace=getppid", st)
  if (k == "n/a") none("kernel syscalls/sys_enter_getppid", kw)
  else row("kernel syscalls/sys_enter_getppid", k)
  printf "rewritten site: dprobe adds %.1f ns per traced call (target: <= 100 ns)\n", t - p
  printf "dispatch:       dprobe adds %.1f ns per traced call\n", d - p
  printf "of the rewritten site'"'"'s, the kernel'"'"'s own dispatch check: %.1f ns\n", f - p
  if (st != "n/a") {
    printf "strace / dprobe, rewritten site (added ns) = %.1f  (target: >= 500)\n", (st - p) / (t - p)
    printf "strace / dprobe, dispatch (added ns)       = %.1f  (target: >= 50)\n", (st - p) / (d - p)
  }
  if (k != "n/a") printf "dprobe rewritten site / kernel event (added ns) = %.2f\n", (t - p) / (k - p)
}'
