#!/bin/sh
# Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#
# Writes, at build time and on the build host, what the selftests need to
# know about the test programs and cannot find out in a guest that has no
# objdump, nm or readelf (busybox has none of them):
#
#   OUT/PROGRAM.insns   every instruction of st_step: "OFFSET LENGTH", decimal
#   OUT/PROGRAM.syms    "NAME ADDRESS FILE_OFFSET SIZE" for each st_* and
#                       hist_* symbol and main (addresses and offsets in hex, 0x...)
#   OUT/errors.txt      "CODE<TAB>MESSAGE", the error table of docs/language.md
#
# usage: gen_data.sh OBJDUMP NM READELF LANGUAGE_MD OUT PROGRAM...
# OBJDUMP, NM and READELF are the target's (GNU or LLVM ones both work).
set -eu
if [ $# -lt 6 ]; then
  echo "usage: gen_data.sh OBJDUMP NM READELF LANGUAGE_MD OUT PROGRAM..." >&2
  exit 2
fi
objdump=$1 nm=$2 readelf=$3 language_md=$4 out=$5
shift 5
mkdir -p "$out"

# awk without gawk's strtonum: "0x1a2b" or "1a2b" (hex) to a number.
hex_awk='
function hex(s,    i, c, v) {
  sub(/^0x/, "", s)
  v = 0
  for (i = 1; i <= length(s); i++) {
    c = index("0123456789abcdef", tolower(substr(s, i, 1)))
    if (c == 0) return -1
    v = v * 16 + c - 1
  }
  return v
}'

for program in "$@"; do
  name=$(basename "$program")

  # Instruction addresses of st_step, in the disassembly's order; each
  # one's length is the distance to the next, the last one's to the end of
  # the symbol.
  start_size=$("$nm" -S "$program" | awk '$4 == "st_step" {print $1, $2; exit}')
  [ -n "$start_size" ] || { echo "gen_data: no st_step in $program" >&2; exit 1; }
  "$objdump" -d "$program" | awk -v start_size="$start_size" "$hex_awk"'
    BEGIN { split(start_size, f, " "); start = hex(f[1]); end = start + hex(f[2]) }
    /<st_step>:$/ { inside = 1; next }
    inside && /^[[:space:]]*$/ { exit }
    inside && match($0, /^[[:space:]]*[0-9a-f]+:/) {
      address = substr($0, RSTART, RLENGTH - 1)
      sub(/^[[:space:]]*/, "", address)
      address = hex(address)
      if (address >= start && address < end) addresses[n++] = address  # not the padding after
    }
    END {
      if (n == 0) { print "gen_data: no instructions of st_step" > "/dev/stderr"; exit 1 }
      for (i = 0; i < n; i++) {
        next_address = (i + 1 < n) ? addresses[i + 1] : end
        printf "%d %d\n", addresses[i] - start, next_address - addresses[i]
      }
    }' > "$out/$name.insns.tmp"
  mv "$out/$name.insns.tmp" "$out/$name.insns"

  # Symbols, with the file offset of each (the PATH:0xOFFSET target).
  "$readelf" -lW "$program" | awk '$1 == "LOAD" {print $2, $3, $5}' > "$out/$name.loads.tmp"
  "$nm" -S "$program" | awk -v loads="$out/$name.loads.tmp" "$hex_awk"'
    BEGIN {
      n = 0
      while ((getline line < loads) > 0) {
        split(line, f, " ")
        off[n] = hex(f[1]); va[n] = hex(f[2]); filesz[n] = hex(f[3]); n++
      }
    }
    NF == 4 && ($4 ~ /^st_/ || $4 ~ /^hist_/ || $4 == "main") {
      address = hex($1)
      file_offset = -1
      for (i = 0; i < n; i++) {
        if (address >= va[i] && address < va[i] + filesz[i]) file_offset = address - va[i] + off[i]
      }
      if (file_offset < 0) next
      printf "%s 0x%x 0x%x %d\n", $4, address, file_offset, hex($2)
    }' > "$out/$name.syms.tmp"
  rm -f "$out/$name.loads.tmp"
  mv "$out/$name.syms.tmp" "$out/$name.syms"
done

# The error table: the rows "| `CODE` | message |" of docs/language.md (the
# unit tests keep that table equal to the one in the code).
sed -n 's/^| `\([A-Z0-9_]*\)` | \(.*\) |$/\1	\2/p' "$language_md" > "$out/errors.txt.tmp"
[ -s "$out/errors.txt.tmp" ] || { echo "gen_data: no error table in $language_md" >&2; exit 1; }
mv "$out/errors.txt.tmp" "$out/errors.txt"
