#!/usr/bin/env bash
# Captures this machine's kernel syscall events as data for
# src/syscalls/syscall_table.cc: the argument types and names of every
# events/syscalls/sys_enter_NAME/format, with the system call's number from
# the uapi header, one C++ initializer line per call, sorted by number:
#
#   {257, "openat", 4, {{"int", "dfd"}, {"const char *", "filename"}, ...}},
#
# Writes data/syscalls/x86_64.inc. Needs read access to tracefs (root), and
# mounts it when it is not mounted and we are root.
#
#   scripts/capture-syscall-formats.sh [TRACEFS_DIR]   (/sys/kernel/tracing)
set -euo pipefail
cd "$(dirname "$0")/.."
tracefs=${1:-/sys/kernel/tracing}
header=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
out=data/syscalls/x86_64.inc

# The event is named after the kernel function (SYSCALL_DEFINE's name),
# the header after the syscall table's entry; where they differ, the
# table's name for the event (arch/x86/entry/syscalls/syscall_64.tbl).
aliases="
newstat stat
newfstat fstat
newlstat lstat
newuname uname
sendfile64 sendfile
umount umount2
"

# x86_64 numbers of the system calls newer than the installed header (a
# stable ABI, from syscall_64.tbl; each one checked on Linux 6.18 by calling
# the number and seeing its sys_enter_NAME event fire).
newer_than_header="
uretprobe 335
uprobe 336
cachestat 451
fchmodat2 452
futex_wake 454
futex_wait 455
futex_requeue 456
statmount 457
listmount 458
lsm_get_self_attr 459
lsm_set_self_attr 460
lsm_list_modules 461
mseal 462
setxattrat 463
getxattrat 464
listxattrat 465
removexattrat 466
open_tree_attr 467
file_getattr 468
file_setattr 469
"

die() { echo "capture-syscall-formats: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "the header and the numbers are x86_64's; this is $(uname -m)"
[ -r "$header" ] || die "no $header (Debian: apt-get install linux-libc-dev)"
events=$tracefs/events/syscalls
if [ ! -d "$events" ] && [ "$(id -u)" -eq 0 ]; then
  mount -t tracefs nodev "$tracefs" || true
fi
[ -r "$events/sys_enter_openat/format" ] || die "cannot read $events (root? tracefs mounted?)"

# "name number" for every __NR_ of the header.
header_numbers() { awk '$1 == "#define" && $2 ~ /^__NR_/ { print substr($2, 6), $3 }' "$header"; }

# The number of one event's system call: the header's, through an alias
# when the names differ, else the list above.
number_of() {
  local name=$1 table_name
  table_name=$(awk -v n="$name" '$1 == n { print $2 }' <<<"$aliases")
  header_numbers | awk -v n="${table_name:-$name}" '$1 == n { print $2; found = 1 }
    END { exit !found }' && return
  awk -v n="$name" '$1 == n { print $2; found = 1 } END { exit !found }' <<<"$newer_than_header"
}

# One event's initializer line. The fields after __syscall_nr are the
# arguments: "\tfield:TYPE NAME;\toffset:16+8i;\tsize:8;\tsigned:0;". The
# type may hold spaces and '*', so the name is the last word; anything
# else than that layout is not what syscall_format() reproduces: fail.
entry_line() {
  local name=$1 number=$2
  awk -v name="$name" -v nr="$number" '
    function quote(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
    function fail(why) { print "sys_enter_" name ": " why ": " $0 > "/dev/stderr"; bad = 1; exit 1 }
    /^\tfield:int __syscall_nr;/ { in_args = 1; next }
    in_args && /^\tfield:/ {
      decl = $0
      sub(/^\tfield:/, "", decl)
      sub(/;\toffset:.*/, "", decl)
      rest = substr($0, length("\tfield:" decl) + 1)
      want = ";\toffset:" (16 + 8 * count) ";\tsize:8;\tsigned:0;"
      if (rest != want) fail("an argument not at offset " (16 + 8 * count) " size 8 unsigned")
      split_at = match(decl, / [^ ]+$/)
      if (!split_at) fail("an argument with no type")
      args[count++] = "{" quote(substr(decl, 1, split_at - 1)) ", " quote(substr(decl, split_at + 1)) "}"
    }
    END {
      if (bad) exit 1
      if (!in_args) { print "sys_enter_" name ": no __syscall_nr field" > "/dev/stderr"; exit 1 }
      if (count > 6) { print "sys_enter_" name ": " count " arguments" > "/dev/stderr"; exit 1 }
      line = "{" nr ", " quote(name) ", " count + 0 ", {"
      for (i = 0; i < count; i++) line = line (i ? ", " : "") args[i]
      print line "}},"
    }' "$events/sys_enter_$name/format"
}

# Every event as "number<TAB>line"; a name without a number stops here.
collect() {
  local dir name number line missing=0
  for dir in "$events"/sys_enter_*; do
    name=${dir##*/sys_enter_}
    if ! number=$(number_of "$name"); then
      echo "capture-syscall-formats: no number for sys_enter_$name: add it to newer_than_header" >&2
      missing=1
      continue
    fi
    line=$(entry_line "$name" "$number") || return 1
    printf '%s\t%s\n' "$number" "$line"
  done
  return $missing
}

entries=$(collect) || die "stopped, see above"
duplicates=$(cut -f1 <<<"$entries" | sort -n | uniq -d)
[ -z "$duplicates" ] || die "two events with one number: $duplicates"

# The reverse: numbers with no event are fine (no tracepoint for them in
# this kernel), but worth a note.
traced=$(cut -f1 <<<"$entries" | sort -n)
untraced=$(header_numbers | while read -r name number; do
  grep -qx "$number" <<<"$traced" || printf '%s(%s) ' "$name" "$number"
done)
[ -z "$untraced" ] || echo "note: no syscalls event for: $untraced" >&2

mkdir -p "$(dirname "$out")"
{
  echo "// Generated: do not edit. Made by \`scripts/capture-syscall-formats.sh $tracefs\`"
  echo "// from events/syscalls/sys_enter_*/format of Linux $(uname -r) (x86_64)"
  echo "// and the numbers of $header."
  echo "// {nr, event name after sys_enter_, argument count, {{type, name}, ...}}, by number."
  sort -n -k1,1 <<<"$entries" | cut -f2-
} >"$out"
echo "wrote $out: $(grep -c '^{' "$out") system calls" >&2
