#!/bin/sh
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Runs the selftests, as the kernel's ftracetest does: one case a file
# (cases/*.tc), one TAP line a case, then the counts. POSIX sh, so that it
# runs under busybox ash in the guests booted in QEMU and on any host.
#
#   run.sh [--build DIR] [--unit DIR] [-v] [CASE...]
#
#   --build DIR  the build tree (DIR/dprobe, DIR/tests/programs,
#                DIR/tests/selftests/data); default: build/ beside the sources
#   --unit DIR   also run the GoogleTest binaries DIR/*_test, one TAP line
#                each (the guests do; on a host ctest runs them)
#   -v           print each case's log, not only a failed one's
#   CASE         a case's name (cases/NAME.tc) or path; default: every case
#
# A case's header says what it is and what it needs:
#
#   # description: Probes on every instruction of a function
#   # requires: engine program:selftest_O2 root tracefs
#
#   engine        dprobe run (the probe engine for this ISA); without it the
#                 case is "not yet supported on this architecture", counted
#                 apart, never as passed
#   noengine      a build without the engine (what it says instead)
#   root, tracefs root; a writable /sys/kernel/tracing/uprobe_events
#   program:NAME  the test program NAME (tests/programs)
#   cmd:NAME      a command NAME in $PATH
#
# Results: "ok N - DESC", "not ok N - DESC" (the case's log follows as
# "# " lines), "ok N - DESC # SKIP reason", and for a case of the engine on
# an ISA that has none "ok N - DESC # UNSUPPORTED on this architecture".
# Last: "# N unsupported on this architecture" and "N passed, N failed, N
# skipped". Exit status 0 when nothing failed. A case is killed after
# $SELFTEST_TIMEOUT seconds (300), a GoogleTest binary after
# $SELFTEST_UNIT_TIMEOUT (400).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=
unit=
verbose=0
case_timeout=${SELFTEST_TIMEOUT:-300}
# A GoogleTest binary is many tests under one limit.
unit_timeout=${SELFTEST_UNIT_TIMEOUT:-400}

usage() { sed -n '4,17s/^# \{0,1\}//p' "$0"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --unit) unit=${2:?--unit needs a directory}; shift 2 ;;
    -v) verbose=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$build" ] || build="$here/../../build"
if ! build=$(cd "$build" 2>/dev/null && pwd); then
  echo "Bail out! no build directory $build (scripts/build.sh builds one)"
  exit 2
fi

DPROBE=$build/dprobe
PROGRAMS=$build/tests/programs
DATA=$build/tests/selftests/data
export DPROBE PROGRAMS DATA
for needed in "$DPROBE" "$PROGRAMS" "$DATA/errors.txt"; do
  if [ ! -e "$needed" ]; then
    echo "Bail out! $needed is missing (scripts/build.sh builds it)"
    exit 2
  fi
done

# The cases to run, in order.
if [ $# -gt 0 ]; then
  cases=
  for name in "$@"; do
    case "$name" in
      */*) path=$(cd "$(dirname "$name")" 2>/dev/null && pwd)/$(basename "$name") ;;
      *) path="$here/cases/${name%.tc}.tc" ;;
    esac
    [ -f "$path" ] || { echo "Bail out! no case $name ($path)"; exit 2; }
    cases="$cases $path"
  done
else
  cases=$(ls "$here"/cases/*.tc)
fi

units=
if [ -n "$unit" ]; then
  units=$(ls "$unit"/*_test 2>/dev/null || true)
fi

# The probe engine: a dprobe built without one says so for `run`.
engine=1
if "$DPROBE" run -- /bin/true 2>&1 | grep -q 'not supported on this architecture'; then
  engine=0
fi

number=0 passed=0 failed=0 skipped=0 unsupported=0
count=0
for c in $cases $units; do count=$((count + 1)); done
echo "1..$count"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/dprobe-selftests.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

# Prints FILE as TAP diagnostics, its last LINES lines.
diagnostics() {  # FILE [LINES]
  tail -n "${2:-60}" "$1" | sed 's/^/# /'
}

# Why a case cannot run here (to stdout), with its kind as the status:
# 0 it can run, 1 skip, 2 unsupported on this architecture.
unmet() {  # CASE
  for need in $(sed -n 's/^# requires://p' "$1" | head -n 1); do
    case "$need" in
      engine)
        [ "$engine" = 1 ] || { echo "UNSUPPORTED on this architecture"; return 2; } ;;
      noengine)
        [ "$engine" = 0 ] || { echo "this build has the probe engine"; return 1; } ;;
      root)
        [ "$(id -u)" = 0 ] || { echo "needs root"; return 1; } ;;
      tracefs)
        [ -w /sys/kernel/tracing/uprobe_events ] ||
          { echo "needs a writable /sys/kernel/tracing/uprobe_events"; return 1; } ;;
      program:*)
        [ -x "$PROGRAMS/${need#program:}" ] ||
          { echo "no test program ${need#program:} in $PROGRAMS"; return 1; } ;;
      cmd:*)
        command -v "${need#cmd:}" > /dev/null 2>&1 || { echo "no ${need#cmd:} in PATH"; return 1; } ;;
      *)
        echo "unknown requirement '$need'"; return 1 ;;
    esac
  done
  return 0
}

# Runs COMMAND..., killed after SECONDS when timeout exists.
limited() {  # SECONDS COMMAND...
  seconds=$1
  shift
  if command -v timeout > /dev/null 2>&1; then
    timeout -s KILL "$seconds" "$@"
  else
    "$@"
  fi
}

run_case() {  # CASE
  number=$((number + 1))
  name=$(basename "$1" .tc)
  desc=$(sed -n 's/^# description: *//p' "$1" | head -n 1)
  [ -n "$desc" ] || desc=$name
  title="$name: $desc"
  kind=0
  reason=$(unmet "$1") || kind=$?
  if [ "$kind" -eq 2 ]; then
    echo "ok $number - $title # $reason"
    unsupported=$((unsupported + 1))
    return
  elif [ "$kind" -eq 1 ]; then
    echo "ok $number - $title # SKIP $reason"
    skipped=$((skipped + 1))
    return
  fi

  tmp="$scratch/$name"
  mkdir -p "$tmp"
  status=0
  (cd "$tmp" && export TMP="$tmp" && limited "$case_timeout" sh -c 'set -eu; . "$1"; . "$2"' case "$here/lib.sh" "$1") \
    > "$tmp/.log" 2>&1 || status=$?
  case "$status" in
    0)
      echo "ok $number - $title"
      passed=$((passed + 1))
      [ "$verbose" = 0 ] || diagnostics "$tmp/.log" 1000 ;;
    77)
      echo "ok $number - $title # SKIP $(cat "$tmp/.reason" 2>/dev/null || echo 'no reason given')"
      skipped=$((skipped + 1)) ;;
    *)
      if [ "$status" -eq 137 ] || [ "$status" -eq 124 ]; then
        echo "not ok $number - $title # killed after ${case_timeout}s"
      else
        echo "not ok $number - $title"
      fi
      failed=$((failed + 1))
      diagnostics "$tmp/.log" ;;
  esac
  rm -rf "$tmp"
}

# A GoogleTest binary as one TAP line. unit_skips.txt (beside this script,
# or in tests/selftests/vm/) lists "BINARY FILTER REASON" for tests that
# need what a guest does not have; they are left out and said so.
run_unit() {  # BINARY
  number=$((number + 1))
  name=$(basename "$1")
  skips_file="$here/unit_skips.txt"
  [ -f "$skips_file" ] || skips_file="$here/vm/unit_skips.txt"
  filter=
  reasons=
  left_out=0
  if [ -f "$skips_file" ]; then
    filter=$(awk -v b="$name" '$1 == b {printf "%s%s", sep, $2; sep = ":"}' "$skips_file")
    reasons=$(awk -v b="$name" '$1 == b {$1 = ""; $2 = ""; sub(/^ */, ""); if (!seen[$0]++) print}' \
      "$skips_file" | paste -sd ';' - | sed 's/;/; /g')
  fi
  log="$scratch/$name.log"
  status=0
  limited "$unit_timeout" "$1" --gtest_brief=1 ${filter:+"--gtest_filter=-$filter"} \
    > "$log" 2>&1 || status=$?
  if [ -n "$filter" ]; then
    left_out=$("$1" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ' || true)
  fi
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log" | tail -n 1)
  gskipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\},.*/\1/p' "$log" | tail -n 1)
  summary="${ran:-?} tests${gskipped:+, $gskipped skipped by themselves}"
  [ "$left_out" -eq 0 ] || summary="$summary, $left_out left out ($reasons)"
  if [ "$status" -eq 0 ] && [ -n "$ran" ]; then
    echo "ok $number - unit $name: $summary"
    passed=$((passed + 1))
    [ "$verbose" = 0 ] || diagnostics "$log" 1000
  else
    echo "not ok $number - unit $name: $summary (exit $status)"
    failed=$((failed + 1))
    # Every failed test (gtest lists them at the end), then where it stopped.
    grep '^\[  FAILED  \] [A-Za-z]' "$log" | sort -u | sed 's/^/# /' || true
    diagnostics "$log" 30
  fi
}

for c in $cases; do run_case "$c"; done
for u in $units; do run_unit "$u"; done

[ "$unsupported" -eq 0 ] ||
  echo "# $unsupported unsupported on this architecture (not run, not counted as passed)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
