#!/usr/bin/env bash
# Fails, listing the files, when clang-format would change any C++ source.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.h' | grep -v '^tests/fuzz/corpus/')
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "clang-format would change:"; printf '  %s\n' "${bad[@]}"
  echo "run: clang-format -i ${bad[*]}"
  exit 1
fi
echo "clang-format: ${#files[@]} files clean"
