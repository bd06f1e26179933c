#!/usr/bin/env bash
# The torture suite: programs of this machine that nobody here wrote, run
# untraced and then under probes on every function of the C library (entry,
# return, and both; with and without --follow). Each traced run must print
# exactly what the untraced one printed and end the same way (exit status,
# or the signal that killed it), and its trace must hold hits.
#
#   tests/torture/torture.sh build/dprobe [CASE...]   # no CASE: every case
#
# Prints a line per run and ends with "N passed, N failed".
set -u
dprobe=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/dprobe-torture.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Inputs every case reads, made once, the same for both runs.
make_inputs() {
  mkdir -p "$work/tree/sub"
  seq 1 50000 | awk '{print ($1 * 7919) % 100003}' > "$work/numbers.txt"
  head -c 4000000 /dev/zero | tr '\0' 'a' | fold -w 61 > "$work/tree/sub/text.txt"
  for i in 1 2 3 4 5; do echo "file $i" > "$work/tree/f$i.txt"; done
  printf 'int square(int x) { return x * x; }\nint main() { return square(3) - 9; }\n' \
    > "$work/unit.cc"
  printf 'math(EXPR n "6 * 7")\nmessage(STATUS "n=${n}")\nstring(TOUPPER "dprobe" u)\nmessage(STATUS "${u}")\n' \
    > "$work/script.cmake"
  (cd "$work" && git init -q repo && cd repo && echo one > a.txt && git add a.txt &&
    GIT_AUTHOR_DATE="1000000000 +0000" GIT_COMMITTER_DATE="1000000000 +0000" git -c user.name=t -c user.email=t@t \
      commit -qm first && echo two >> a.txt &&
    GIT_AUTHOR_DATE="1000000001 +0000" GIT_COMMITTER_DATE="1000000001 +0000" git -c user.name=t -c user.email=t@t \
      commit -qam second)
}

# name | follow-needed | command (run by bash in $work) | check after it.
# The command may hold pipes; the check may not (the last "|" ends the
# command).
CASES=(
  "bash|no|bash -c 'for i in 1 2 3; do echo \$((i * i)); done; v=\$(echo sub); echo \$v'|"
  "dash|no|sh -c 'exec ls -d / /usr'|"
  "python3_threads|no|/usr/bin/python3 -c 'import threading, hashlib
out = {}
def work(n): out[n] = hashlib.sha256(str(n).encode() * 100000).hexdigest()
ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out.items()))'|"
  "perl|no|perl -e 'my %h; \$h{\$_} = \$_ * 2 for 1 .. 5000; print scalar(keys %h), \"\\n\"; print join(\",\", sort { \$a <=> \$b } map { \$_ * 3 } 1 .. 10), \"\\n\"'|"
  "sqlite3|no|sqlite3 :memory: 'create table t(a); insert into t values (1), (2), (3); select sum(a), group_concat(a) from t;'|"
  "git|no|git -C repo log --format='%s %at' --stat|"
  "gxx|yes|g++ -O1 -c unit.cc -o unit.o|sha256sum unit.o"
  "xz_threads|no|xz -T2 --block-size=262144 -k -f -c tree/sub/text.txt > text.xz|xz -dc text.xz > text.out && sha256sum text.out"
  "tar_gzip|yes|sh -c 'tar cf - -C tree --sort=name --mtime=@0 --owner=0 --group=0 . | gzip -n | sha256sum'|"
  "sort|no|sort -n --parallel=2 -S 2M numbers.txt | sha256sum|"
  "openssl|no|openssl dgst -sha256 -r tree/sub/text.txt|"
  "cmake|no|cmake -P script.cmake|"
  "find|no|find tree -type f -name '*.txt' -size +0|"
  "awk|no|awk '{ s += \$1 } END { print s, NR }' numbers.txt|"
)

PROBE_SETS=("p libc.so.6:*" "r libc.so.6:*" "both")

# Runs the case's command (traced with the given dprobe prefix, or not) and
# prints what it printed, how it ended, and what its check prints.
run_case() {
  local prefix=$1 command=$2 check=$3
  (cd "$work" && eval "$prefix $command" 2>/dev/null
   echo "status=$?"
   [ -z "$check" ] || eval "$check")
}

passed=0
failed=0
make_inputs
selected=("$@")
for entry in "${CASES[@]}"; do
  # Fields split by hand: a command may hold pipes and span lines.
  name=${entry%%|*}
  needs_follow=${entry#*|}
  needs_follow=${needs_follow%%|*}
  command=${entry#*|*|}
  command=${command%|*}
  check=${entry##*|}
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " =~ " $name " ]]; then continue; fi
  want=$(run_case "" "$command" "$check")
  # A reference run that failed compares nothing: say so, as a failure.
  if ! grep -qx 'status=0' <<< "$want"; then
    failed=$((failed + 1))
    echo "not ok - $name: the untraced run failed"
    echo "$want" | tail -3 | sed 's/^/#   /'
    continue
  fi
  follows=("")
  [ "$needs_follow" = yes ] && follows+=("--follow")
  for set in "${PROBE_SETS[@]}"; do
    case $set in
      both) defs=(-e 'p libc.so.6:*' -e 'r libc.so.6:*') ;;
      *) defs=(-e "$set") ;;
    esac
    for follow in "${follows[@]}"; do
      trace="$work/trace.txt"
      printf -v prefix '%q ' timeout 120 "$dprobe" run -o "$trace" $follow "${defs[@]}" --
      got=$(run_case "$prefix" "$command" "$check")
      hits=$(wc -l < "$trace" 2>/dev/null || echo 0)
      label="$name [$set${follow:+ $follow}]"
      if [ "$got" == "$want" ] && [ "$hits" -gt 0 ]; then
        passed=$((passed + 1))
        echo "ok - $label ($hits trace lines)"
      else
        failed=$((failed + 1))
        echo "not ok - $label ($hits trace lines)"
        diff <(echo "$want") <(echo "$got") | head -10 | sed 's/^/#   /'
      fi
      rm -f "$trace"
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
