#!/usr/bin/env bash
# bench-ab.sh BEFORE_DIR AFTER_DIR PKG BENCH COUNT [ENV=VALUE ...]
# Runs one benchmark in two checkouts of the repository, interleaved (A, B,
# A, B, ...) so that the machine's load falls on both alike, and prints
# benchstat's comparison. The raw runs go to $OUT (default /tmp/bench-ab).
set -euo pipefail
before=$1 after=$2 pkg=$3 bench=$4 count=$5
shift 5
out=${OUT:-/tmp/bench-ab}
mkdir -p "$out"
: >"$out/before.txt"
: >"$out/after.txt"
for dir in "$before" "$after"; do (cd "$dir" && go test -c -o "$out/$(basename "$dir").test" "./$pkg"); done
for i in $(seq "$count"); do
  for side in before after; do
    dir=$before
    [ "$side" = after ] && dir=$after
    (cd "$dir/$pkg" && env "$@" "$out/$(basename "$dir").test" -test.run '^$' -test.bench "$bench" -test.count 1) >>"$out/$side.txt"
  done
done
echo "load: $(uptime)"
"${BENCHSTAT:-benchstat}" "$out/before.txt" "$out/after.txt"
