#!/usr/bin/env bash
# gdb as the oracle of source variables: the same place and the same C
# expressions, on tests/programs/dwarf_vars.c, once through `dprobe run -e
# 'p:t/e LOCATION EXPR...'` and once through gdb (`break LOCATION` with a
# silent commands block that printfs each expression and continues); every
# hit must print the same values, hit by hit (so the counts agree too).
# Four builds: the two given (clang -O0 and -O2, frame pointers) and, when
# gcc is there, the source built here with gcc -O0 -g and -O2 -g (a CFA
# frame base, other location lists, inlined copies with location views).
# Pointers differ from run to run (gdb turns ASLR off, and dprobe's agent
# comes through the environment, which moves the stack): each side's are
# compared as offsets from the least non-null pointer of the case.
# A variable dprobe refuses (VAR_OPTIMIZED, VAR_UNSUPPORTED) agrees with
# gdb only when gdb cannot print it either, at its first hit; it is then
# left out and the rest of the case compared. Needs gdb; otherwise it says
# so and is skipped (77).
#   usage: dwarf_values.sh path/to/dprobe path/to/dwarf_vars_O0 path/to/dwarf_vars_O2 path/to/dwarf_vars.c
set -uo pipefail
dprobe=${1:?dprobe}
clang_O0=${2:?dwarf_vars_O0}
clang_O2=${3:?dwarf_vars_O2}
source_file=${4:?dwarf_vars.c}

if ! command -v gdb > /dev/null; then echo "SKIP: no gdb"; exit 77; fi

work=$(mktemp -d /tmp/dprobe-dwarf-values-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

cp "$clang_O0" "$work/clang_O0" && cp "$clang_O2" "$work/clang_O2" || exit 1
programs=(clang_O0 clang_O2)
# gcc's, built from a copy named dwarf_vars.c: its DW_AT_name as clang's.
if command -v gcc > /dev/null && cp "$source_file" "$work/dwarf_vars.c" &&
  (cd "$work" && gcc -O0 -g -o gcc_O0 dwarf_vars.c && gcc -O2 -g -o gcc_O2 dwarf_vars.c); then
  programs+=(gcc_O0 gcc_O2)
else
  echo "no gcc builds: the clang ones only"
fi

# DPROBE_LOCATION|GDB_LOCATION|EXPR:FORMAT... GDB_LOCATION empty is the
# same; '*' is each address `dprobe check` puts the probes at (break *ADDR).
# FORMAT is how gdb prints it as dprobe does: d (int, enum), ld (long),
# u (unsigned, bitfield), s (string, char* or char[N]), p (pointer, hex),
# Nd (an array of N ints, {a,b,...}). main builds nodes[0..2] (ids 1..3,
# pos.x = 10*i, pos.y = -7*i, ...), linked by next, and calls visit(&nodes[0],
# 0) (recursive: 3 hits, weigh inlined in each) and sum(table, 3).
cases=(
  # Function entry, after the prologue as gdb's break: every kind of member.
  "visit||it:p it->id:d it->name:s it->pos.y:d it->flags:u it->level:u it->tag:s it->color:d it->next:p it->u.as_long:ld depth:d"
  # Array members, whole and by element.
  "visit||it->scores:4d it->scores[2]:d it->u.bytes[1]:u it->pos.x:d"
  # The inlined function: gdb stops in each inlined copy.
  "weigh||n:p n->id:d n->pos.x:d"
  # A loop body: three hits, i and total changing. At clang -O2 the line is
  # three blocks (vectorized loop, its unrolled rest, the scalar loop):
  # dprobe probes each, gdb keeps one location per lexical block, the
  # vectorized loop's, which count = 3 never reaches; hence gdb's '*'.
  "dwarf_vars.c:58|*|i:d total:ld values[1]:ld count:d"
  # FUNC@FILE (gdb spells it FILE:FUNC): a parameter array and a global one.
  "sum@dwarf_vars.c|dwarf_vars.c:sum|values:p count:d values[2]:ld table:3ld table[2]:ld"
  # main after its loop: members through '.', of array elements; chains from a global.
  "dwarf_vars.c:81||nodes[2].name:s nodes[1].pos.y:d nodes[0].tag:s nodes[1].scores[3]:d nodes[2].flags:u list_head->name:s list_head->next->next->id:d"
  # FUNC:RELATIVE_LINE (line 50 of the file): globals while visits counts up.
  "visit:3|dwarf_vars.c:50|visits:d greeting:s list_head->name:s depth:d"
  # Unwinding the recursion: the innermost call first.
  "dwarf_vars.c:51||score:d sink:ld visits:d"
  # main's locals after the calls, and globals.
  "dwarf_vars.c:83||score:d total:ld visits:d greeting:s table:3ld table[0]:ld"
)

# dprobe's default name of an unnamed argument: each run of non-word
# characters one '_', none at the end (it->scores[2] -> it_scores_2).
name_of() { sed -E 's/[^A-Za-z0-9_]+/_/g; s/_+$//' <<< "$1"; }

# The gdb line that prints EXPR:FORMAT as dprobe prints it.
gdb_printf() {  # EXPR:FORMAT
  local expr=${1%:*} format=${1##*:} name i args=() fmt list
  name=$(name_of "$expr")
  case $format in
    d) fmt=%d ;; ld) fmt=%ld ;; u) fmt=%u ;; s) fmt='\"%s\"' ;; p) fmt=0x%lx ;;
    [0-9]*)  # An array: element by element, into {a,b,c}.
      local n=${format%%[a-z]*} elem=%${format##*[0-9]} parts=()
      for ((i = 0; i < n; i++)); do parts+=("$elem"); args+=("${expr}[$i]"); done
      fmt="{$(IFS=,; echo "${parts[*]}")}" ;;
    *) echo "bad format '$format'" >&2; return 1 ;;
  esac
  [ ${#args[@]} -eq 0 ] && args=("$expr")
  # The name first, on its own: an expression gdb cannot print leaves its
  # name last on the line, whether it fails to evaluate or to format.
  echo "printf \" $name=\""
  printf -v list '%s, ' "${args[@]}"
  echo "printf \"$fmt\", ${list%, }"
}

# gdb's hits of LOCATION, one line each ("a=1 b=2"), in $work/gdb.hits. A
# hit whose commands stopped on an error leaves a line without its closing
# '|': $gdb_failed is then the index of the expression that failed, and
# $gdb_error gdb's message. FUNCTION, when the location names one, is the
# frame the expressions are read in: at clang -O2, gdb's `break visit`
# stops at the first instruction of weigh inlined there and shows weigh's
# frame, where `it` is not in scope (and `frame function visit` picks
# weigh's frame too: its pc is in visit); so up to the first frame of it.
gdb_trace() {  # PROGRAM GDB_LOCATION FUNCTION DPROBE_LOCATION EXPR:FORMAT...
  local program=$1 at=$2 function=$3 location=$4 spec
  shift 4
  breaks=()  # Global: printed when the case differs.
  if [ "$at" = '*' ]; then
    # The place without variables: the same for a line, and there when
    # dprobe refuses a variable.
    readarray -t breaks < <("$dprobe" check -x "$work/$program" -e "p:t/e $location" 2> /dev/null |
      awk '{print "*" $2}')
  else
    breaks=("$at")
  fi
  {
    echo "set pagination off"
    echo "set confirm off"
    echo "set width 0"
    echo "set debuginfod enabled off"
    for spec in "${breaks[@]}"; do echo "break $spec"; done
    echo "commands 1-${#breaks[@]}"
    echo "silent"
    [ -n "$function" ] && printf 'while !$_caller_is("%s", 0)\nup-silently\nend\n' "$function"
    echo 'printf "@@"'
    for spec in "$@"; do gdb_printf "$spec" || return 1; done
    echo 'printf " |\n"'
    echo "continue"
    echo "end"
    # The program's own output kept off gdb's.
    echo "run > /dev/null"
  } > "$work/commands.gdb"
  gdb -nx -batch -x "$work/commands.gdb" "$work/$program" > "$work/gdb.out" 2> "$work/gdb.err"
  sed -n 's/^@@ \(.*\) |$/\1/p' "$work/gdb.out" > "$work/gdb.hits"
  gdb_failed=-1 gdb_error=
  local partial
  partial=$(grep '^@@' "$work/gdb.out" | grep -v ' |$' | head -1)
  if [ -n "$partial" ]; then
    # The expressions printed before the error: as many '=' as names,
    # the last one the expression that failed.
    gdb_failed=$(($(tr -cd '=' <<< "${partial#@@}" | wc -c) - 1))
    gdb_error=$(grep -v '^warning:' "$work/gdb.err" | tail -1)
  fi
  return 0
}

# dprobe's hits, the arguments of each trace line, in $work/dprobe.hits.
# When it refuses the definition: $dprobe_code and the expression under
# the caret, $dprobe_refused.
dprobe_trace() {  # PROGRAM DEFINITION
  dprobe_code='' dprobe_refused=
  "$dprobe" run -e "$2" -- "$work/$1" > "$work/dprobe.out" 2> "$work/dprobe.err"
  local status=$?
  # The event is e, or e_1, e_2... when the place is several blocks of code.
  sed -nE 's/^.*: e(_[0-9]+)?: \([^)]*\) //p' "$work/dprobe.out" > "$work/dprobe.hits"
  [ $status -eq 0 ] && return 0
  dprobe_code=$(sed -nE 's/^dprobe: error: .*\(([A-Z_]+)\)$/\1/p' "$work/dprobe.err" | head -1)
  local command caret
  command=$(grep -m1 '^  Command: ' "$work/dprobe.err")
  caret=$(grep -m1 -A1 '^  Command: ' "$work/dprobe.err" | tail -1)
  caret=${caret%%^*}
  local offset=$((${#caret} - ${#command} + ${#2}))
  if [ -n "$command" ] && [ "$offset" -ge 0 ]; then
    dprobe_refused=${2:offset}
    dprobe_refused=${dprobe_refused%% *}
  fi
  return 1
}

# Pointers as P+offset from the least non-null one of the file; null as is.
normalize() {  # FILE
  local value base=0 line tok toks out
  for value in $(grep -oE '=0x[0-9a-f]+' "$1" | cut -c2-); do
    if ((value != 0 && (base == 0 || value < base))); then base=$value; fi
  done
  while read -r line; do
    read -ra toks <<< "$line"
    out=()
    for tok in "${toks[@]}"; do
      if [[ $tok =~ ^([A-Za-z0-9_]+)=(0x[0-9a-f]+)$ ]] && ((BASH_REMATCH[2] != 0)); then
        tok=$(printf '%s=P+0x%x' "${BASH_REMATCH[1]}" $((BASH_REMATCH[2] - base)))
      fi
      out+=("$tok")
    done
    echo "${out[*]}"
  done < "$1"
}

declare -A passed failed
limits=0
for program in "${programs[@]}"; do
  passed[$program]=0 failed[$program]=0
  for c in "${cases[@]}"; do
    IFS='|' read -r location gdb_location specs <<< "$c"
    # FUNC, FUNC@FILE, FUNC:LINE name the function; FILE.c:LINE does not.
    function=$(sed -nE 's/^([A-Za-z_][A-Za-z0-9_]*)([@:][0-9]+|@.*)?$/\1/p' <<< "$location")
    read -ra specs <<< "$specs"
    what="$program $location"
    problems=() ran=0
    # Each refused variable is looked at, left out with every expression
    # that starts from it (it, it->id...), and the rest run again.
    while [ ${#specs[@]} -gt 0 ]; do
      definition="p:t/e $location"
      for spec in "${specs[@]}"; do definition+=" ${spec%:*}"; done
      gdb_trace "$program" "${gdb_location:-$location}" "$function" "$location" "${specs[@]}" || exit 1
      dprobe_trace "$program" "$definition" && { ran=1; break; }
      index=-1
      for i in "${!specs[@]}"; do [ "${specs[$i]%:*}" = "$dprobe_refused" ] && index=$i; done
      if [ "$index" -lt 0 ]; then
        problems+=("dprobe fails: $(head -3 "$work/dprobe.err" | tr '\n' ' ')")
        break
      fi
      if [[ $dprobe_code =~ ^VAR_(OPTIMIZED|UNSUPPORTED)$ ]] && [ "$gdb_failed" = "$index" ] &&
        [ ! -s "$work/gdb.hits" ] && [[ $gdb_error =~ optimized\ out|[Cc]annot|unavailable ]]; then
        echo "  ($what: $dprobe_refused is out of reach for both: $dprobe_code; gdb: $gdb_error)"
        gdb_says=''
      elif [ "$dprobe_code" = VAR_UNSUPPORTED ] && grep -q 'DW_OP_entry_value' "$work/dprobe.err"; then
        # A documented limit (docs/debug-info.md): the value the caller
        # passed, which gdb finds through the caller's call-site records
        # and no fetch argument can reach. Counted, said, not a failure.
        echo "  LIMIT: $what: $dprobe_refused is the caller's value (DW_OP_entry_value)"
        limits=$((limits + 1))
        gdb_says=''
      else
        if [ "$gdb_failed" = "$index" ]; then
          gdb_says="gdb: $gdb_error (at hit $(($(wc -l < "$work/gdb.hits") + 1)))"
        else
          gdb_says="gdb prints $(cut -d' ' -f$((index + 1)) "$work/gdb.hits" | tr '\n' ' ')"
        fi
      fi
      variable=${dprobe_refused%%[^A-Za-z0-9_]*} left=() out=()
      for spec in "${specs[@]}"; do
        if [ "${spec%%[^A-Za-z0-9_]*}" = "$variable" ]; then out+=("${spec%:*}"); else left+=("$spec"); fi
      done
      [ -n "$gdb_says" ] && problems+=("dprobe refuses ${out[*]} ($dprobe_code: $(sed -n '$p' "$work/dprobe.err" |
        sed 's/^ *//')); $gdb_says")
      specs=("${left[@]}")
    done
    if [ $ran = 1 ]; then
      normalize "$work/gdb.hits" > "$work/expected"
      [ "$gdb_failed" -ge 0 ] && echo "(gdb stopped on an error: $gdb_error)" >> "$work/expected"
      normalize "$work/dprobe.hits" > "$work/actual"
      if [ ! -s "$work/expected" ] || ! cmp -s "$work/expected" "$work/actual"; then
        problems+=("$(wc -l < "$work/expected") hits from gdb, $(wc -l < "$work/actual") from dprobe:
$(diff "$work/expected" "$work/actual" | head -12 | sed 's/^/    /')")
      fi
    fi
    if [ ${#problems[@]} -eq 0 ]; then
      passed[$program]=$((passed[$program] + 1))
      continue
    fi
    failed[$program]=$((failed[$program] + 1))
    echo "DIFFERS: $what"
    printf '  %s\n' "${problems[@]}"
    echo "  definition: $definition"
    gdb_breaks=$(printf 'break %s; ' "${breaks[@]}")
    echo "  gdb: ${gdb_breaks%; }"
    "$dprobe" check -x "$work/$program" -e "$definition" 2>&1 | sed 's/^/  check: /'
  done
done

[ "$limits" -gt 0 ] && echo "$limits variables left out at a documented limit (DW_OP_entry_value)"
total_passed=0 total_failed=0
for program in "${programs[@]}"; do
  echo "$program: ${passed[$program]} passed, ${failed[$program]} failed"
  total_passed=$((total_passed + passed[$program])) total_failed=$((total_failed + failed[$program]))
done
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
