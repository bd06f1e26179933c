#!/usr/bin/env bash
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# dprobe(1) and the bash completion keep up with the CLI: every subcommand
# `dprobe --help` lists and every option `dprobe SUBCOMMAND --help` shows
# is in the man page and in the completion; and `man --warnings -l` has
# nothing to say about the page. Exit 77 (skipped) without man-db.
#
#   tests/install/man_page_test.sh build/dprobe docs/dprobe.1 completion/dprobe.bash
set -euo pipefail
dprobe=$1
page=$2
completion=$3
if ! command -v man >/dev/null || ! command -v col >/dev/null; then
  echo "man_page_test: no man or col (scripts/install-deps.sh installs man-db, bsdextrautils)"
  exit 77
fi

failures=0
failed() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
[ -z "$warnings" ] || failed "man --warnings -l $page says:"$'\n'"$warnings"

# The page as a reader sees it, in ASCII: \- is a plain hyphen there.
text=$(LC_ALL=C MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)

# The options of a --help text: "  -e,--event TEXT ..." gives -e and --event.
options_of() {
  sed -n 's/^  \(-[^ {]*\).*/\1/p' | tr ',' '\n'
}

# NAME appears as a word of its own (not inside a longer option).
has_word() {  # TEXT NAME
  grep -qE -- "(^|[^[:alnum:]-])$(printf '%s' "$2" | sed 's/[.[\*^$]/\\&/g')([^[:alnum:]-]|\$)" <<<"$1"
}

subcommands=$("$dprobe" --help | sed -n '/^Subcommands:/,$s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$subcommands" ] || failed "no subcommands in dprobe --help"
checked=0
for subcommand in "" $subcommands; do
  if [ -n "$subcommand" ]; then
    has_word "$text" "dprobe $subcommand" || failed "subcommand '$subcommand' not in the man page"
    has_word "$(cat "$completion")" "$subcommand" || failed "subcommand '$subcommand' not in the completion"
  fi
  # shellcheck disable=SC2086 # no subcommand: no word
  for option in $("$dprobe" $subcommand --help | options_of); do
    checked=$((checked + 1))
    has_word "$text" "$option" || failed "dprobe $subcommand: $option not in the man page"
    has_word "$(cat "$completion")" "$option" ||
      failed "dprobe $subcommand: $option not in the completion"
  done
done
[ "$checked" -gt 20 ] || failed "only $checked options found in the --help texts"
# The completion loads and completes.
# shellcheck disable=SC2016
got=$(bash -c 'source "$1"; COMP_WORDS=(dprobe run --prof); COMP_CWORD=2; _dprobe; echo "${COMPREPLY[*]}"' _ "$completion")
[ "$got" = "--profile" ] || failed "completing 'dprobe run --prof' gave '$got'"

echo "man_page_test: $checked options of $(echo $subcommands | wc -w) subcommands checked, $failures failures"
[ "$failures" -eq 0 ]
