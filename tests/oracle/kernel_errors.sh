#!/usr/bin/env bash
# The kernel as the oracle of the language: every definition of
# kernel_cases.txt goes to the kernel's uprobe_events and to `dprobe check`;
# the error message and caret column (or the acceptance) must agree.
# Needs root and tracefs; otherwise it says why and is skipped (exit 77).
set -uo pipefail
dprobe=${1:?usage: kernel_errors.sh path/to/dprobe}
cases="$(dirname "$0")/kernel_cases.txt"
tracing=/sys/kernel/tracing

if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to write uprobe_events"; exit 77; fi
if [ ! -e $tracing/uprobe_events ]; then
  mount -t tracefs nodev $tracing 2>/dev/null
fi
if [ ! -w $tracing/uprobe_events ]; then echo "SKIP: no writable $tracing/uprobe_events"; exit 77; fi
if [ -s $tracing/uprobe_events ]; then echo "SKIP: uprobe_events is in use"; exit 77; fi

# A file offset inside the text segment of /bin/true.
text_offset=$(readelf -lW /bin/true | awk '$1 == "LOAD" && / R E / {print $2; exit}')
[ -n "$text_offset" ] || { echo "no text segment found in /bin/true"; exit 1; }
target="/bin/true:$text_offset"

kernel_verdict() {
  echo > $tracing/error_log
  if echo "$1" >> $tracing/uprobe_events 2>/dev/null; then
    echo > $tracing/uprobe_events
    echo "accepted"
    return
  fi
  local message column
  message=$(sed -n '1s/.*error: //p' $tracing/error_log)
  column=$(sed -n '3p' $tracing/error_log | awk '{print index($0, "^") - 12}')
  echo "$message @$column"
}

dprobe_verdict() {
  local err
  err=$("$dprobe" check -e "$1" 2>&1 >/dev/null)
  if [ -z "$err" ]; then echo "accepted"; return; fi
  local message column
  message=$(echo "$err" | sed -n '1s/^dprobe: error: \(.*\) ([A-Z0-9_]*)$/\1/p')
  column=$(echo "$err" | sed -n '3p' | awk '{print index($0, "^") - 12}')
  echo "$message @$column"
}

passed=0 failed=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  def=${line//@T@/$target}
  k=$(kernel_verdict "$def")
  d=$(dprobe_verdict "$def")
  if [ "$k" == "$d" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "DIFFERS: $def"
    echo "  kernel: $k"
    echo "  dprobe: $d"
  fi
done < "$cases"
echo > $tracing/uprobe_events
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
