#!/usr/bin/env bash
# stress-tests.sh: the README's test command under background load, several
# times (issue 36 item 8: tests must hold on a busy 2-core machine). It
# starts BUSY busy loops, runs `go test -count=1 ./...` RUNS times, prints
# each run's failing tests and exits non-zero if any run failed. The loops
# are stopped on exit, whatever happens.
#
#   scripts/stress-tests.sh             # 2 busy loops, 3 runs
#   BUSY=4 RUNS=1 scripts/stress-tests.sh ./secureagg ./sum
#
# Arguments, if any, replace ./... as the packages to test. The long forms
# of tests (more random cases; internal/testkit.LongEnv) run too, unless
# COHORT_LONG_TESTS is set to something else than 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BUSY=${BUSY:-2}
RUNS=${RUNS:-3}
export COHORT_LONG_TESTS=${COHORT_LONG_TESTS:-1}
PKGS=("$@")
((${#PKGS[@]})) || PKGS=(./...)
LOOPS=()
stop() { for pid in "${LOOPS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
for ((i = 0; i < BUSY; i++)); do
	(while :; do :; done) &
	LOOPS+=($!)
done
failed=0
for ((r = 1; r <= RUNS; r++)); do
	log=$(mktemp "${TMPDIR:-/tmp}/stress-run$r.XXXXXX")
	start=$SECONDS
	if go test -count=1 -timeout 60m "${PKGS[@]}" >"$log" 2>&1; then
		echo "run $r: passed in $((SECONDS - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	else
		failed=1
		echo "run $r: FAILED in $((SECONDS - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg)); log $log"
		grep -E '^(--- FAIL|FAIL|panic:)' "$log" | head -40
	fi
done
exit "$failed"
