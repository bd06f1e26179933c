# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# What every selftest case may use; run.sh sources it before the case, in
# a shell with `set -eu` (POSIX sh: busybox ash in the guests, bash or dash
# on a host). Set by run.sh:
#
#   DPROBE     the dprobe binary
#   PROGRAMS   the test programs (tests/programs, built as NAME_O0, NAME_O2)
#   DATA       what the build knew about them (tests/selftests/gen_data.sh)
#   TMP        the case's own directory, also its working directory
#
# A case fails by exiting non-zero (any failing command does, `set -e`),
# with `fail MESSAGE`, or through an expect_* helper; `skip REASON` marks
# it skipped.
#
#   run_dprobe check -x "$PROG" -e 'p st_step'      # -> $TMP/out, $TMP/err, $STATUS
#   expect_status 0
#   expect_out 'p:dprobes/p_st_step_0 st_step'
#   trace -e "p:g/step st_step a=$ARG1" -- "$PROG"  # dprobe run, the trace in $TMP/trace
#   expect_eq "$(args_of step | head -n 1)" 'a=0x1'
#   check_error "p:g/e st_step a=^%zz" BAD_REG_NAME  # ^ marks the caret's column

# shellcheck disable=SC2034 # the variables below are the cases'
# The selftest program, at -O0 and -O2 (tests/programs/selftest.c).
PROG=$PROGRAMS/selftest_O0
PROG_O2=$PROGRAMS/selftest_O2
# Its output, traced or not.
PROG_OUTPUT='selftest: ok 3269'

# Register names of the first two integer arguments, the stack pointer and
# the return value, as the probe language spells them for this ISA, and
# where the return address is at a function's entry.
case "$(uname -m)" in
  x86_64) ARG1=%di ARG2=%si SP=%sp RETREG=%ax RETADDR='$stack0' ;;
  aarch64) ARG1=%x0 ARG2=%x1 SP=%sp RETREG=%x0 RETADDR=%x30 ;;
  *) ARG1=%unknown ARG2=%unknown SP=%sp RETREG=%unknown RETADDR=%unknown ;;
esac

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

skip() {
  echo "$*" > "$TMP/.reason"
  exit 77
}

# Runs dprobe with ARGS; its stdout goes to $TMP/out, its stderr to
# $TMP/err, its exit status to $STATUS. Never fails by itself.
run_dprobe() {
  log_command dprobe "$@"
  STATUS=0
  "$DPROBE" "$@" > "$TMP/out" 2> "$TMP/err" || STATUS=$?
}

# Writes a command to the case's log (stderr), each argument quoted.
log_command() {
  printf '+' >&2
  for word in "$@"; do printf " '%s'" "$word" >&2; done
  printf '\n' >&2
}

# `dprobe run -o $TMP/trace ARGS`: the traced program's output in
# $TMP/out, dprobe's errors (and the profile) in $TMP/err. Fails unless dprobe
# exits with EXPECTED_STATUS (default 0).
trace() {
  run_dprobe run -o "$TMP/trace" "$@"
  if [ "$STATUS" -ne "${EXPECTED_STATUS:-0}" ]; then
    show "$TMP/err" stderr
    fail "dprobe run exited $STATUS, not ${EXPECTED_STATUS:-0}: dprobe run $*"
  fi
}

# Prints FILE to stderr with a title, for the log of a failed case.
show() {  # FILE TITLE
  echo "--- ${2:-$1} ---" >&2
  cat "$1" >&2 || true
  echo "---" >&2
}

expect_eq() {  # ACTUAL EXPECTED [WHAT]
  [ "$1" = "$2" ] && return 0
  printf 'expected%s:\n  %s\nactual:\n  %s\n' "${3:+ ($3)}" "$2" "$1" >&2
  fail "${3:-values differ}"
}

expect_status() {  # EXPECTED
  [ "$STATUS" -eq "$1" ] && return 0
  show "$TMP/out" stdout
  show "$TMP/err" stderr
  fail "dprobe exited $STATUS, not $1"
}

# FILE must hold exactly the lines given, one argument a line.
expect_lines() {  # FILE LINE...
  file=$1
  shift
  printf '%s\n' "$@" > "$TMP/expected"
  [ $# -gt 0 ] || : > "$TMP/expected"
  if ! cmp -s "$TMP/expected" "$file"; then
    echo "--- expected ---" >&2
    cat "$TMP/expected" >&2
    show "$file" "actual ($file)"
    diff "$TMP/expected" "$file" >&2 || true
    fail "$file differs from what was expected"
  fi
}
expect_out() { expect_lines "$TMP/out" "$@"; }
expect_err() { expect_lines "$TMP/err" "$@"; }

# ---- Traces -------------------------------------------------------------

# The trace lines of EVENT.
events() {  # EVENT [TRACE]
  grep -F " $1: (" "${2:-$TMP/trace}" || true
}

count_of() {  # EVENT [TRACE]
  events "$@" | wc -l | tr -d ' '
}

# The fetched arguments of each line of EVENT: everything after the
# location, "(st_step+0x0/0x46) " or "(main+0x9/0x40 <- st_twice) ".
args_of() {  # EVENT [TRACE]
  events "$@" | sed 's/^.*: ([^)]*) \{0,1\}//'
}

# The location of each line of EVENT, without the parentheses.
where_of() {  # EVENT [TRACE]
  events "$@" | sed 's/^[^(]*(\([^)]*\)).*/\1/'
}

# "HITS MISSES" of EVENT in the profile `dprobe run --profile` printed.
profile_of() {  # EVENT
  awk -v e="$1" '$1 == e && NF == 3 && $2 ~ /^[0-9]+$/ {print $2, $3}' "$TMP/err"
}

# ---- The build's data on the test programs ---------------------------------

# A field of SYMBOL in PROGRAM's symbols: address, fileoff or size.
sym() {  # PROGRAM SYMBOL FIELD
  awk -v s="$2" -v f="$3" '$1 == s {
    if (f == "address") print $2; else if (f == "fileoff") print $3; else print $4
  }' "$DATA/$(basename "$1").syms"
}

# "OFFSET LENGTH" of every instruction of st_step in PROGRAM.
insns() {  # PROGRAM
  cat "$DATA/$(basename "$1").insns"
}

# ---- Errors -------------------------------------------------------------

# The message of an error code, as the error table has it.
error_message() {  # CODE
  awk -F '\t' -v c="$1" '$1 == c {print $2}' "$DATA/errors.txt"
}

# Spaces, N of them.
spaces() {  # N
  printf "%${1}s" ''
}

# The kernel's error_log report of CODE for DEFINITION, the caret at COLUMN
# (0-based, in the definition), exactly as dprobe prints it.
error_report() {  # CODE DEFINITION COLUMN
  message=$(error_message "$1")
  [ -n "$message" ] || fail "no error code $1 in $DATA/errors.txt"
  printf 'dprobe: error: %s (%s)\n  Command: %s\n%s^\n' "$message" "$1" "$2" "$(spaces $(($3 + 11)))"
}

# As ftracetest's check_error: MARKED is a definition with ^ where the
# caret must be. `dprobe check -x $PROG` of EARLIER definitions then of
# MARKED without the ^ must exit 2 and print exactly that one report, and
# the line $DETAIL after it when DETAIL is set.
check_error() {  # MARKED CODE [EARLIER...]
  marked=$1 code=$2
  shift 2
  before=${marked%%^*}
  definition="$before${marked#*^}"
  set -- "$@" "$definition"
  error_report "$code" "$definition" "${#before}" > "$TMP/expected"
  [ -z "${DETAIL:-}" ] || printf '%s\n' "$DETAIL" >> "$TMP/expected"
  for d in "$@"; do
    set -- "$@" -e "$d"
    shift
  done
  run_dprobe check -x "$PROG" "$@"
  if [ "$STATUS" -ne 2 ] || ! cmp -s "$TMP/expected" "$TMP/err"; then
    printf 'definition: %s\n' "$definition" >&2
    show "$TMP/expected" "expected stderr"
    show "$TMP/err" "actual stderr (exit $STATUS)"
    fail "$code not reported as expected"
  fi
}
