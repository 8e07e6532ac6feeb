# lib.sh: shared by the per-kind experiment scripts (sourced, not run).
# bench PKG CSV BENCH_REGEX [go test flags...]: compiles PKG's tests, runs the
# benchmarks matching BENCH_REGEX from PKG's directory (as the docs' commands
# do), keeps the raw output beside the CSV (CSV with .txt) and writes the CSV
# with the date, commit and the load average at the start and end on every row.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RESULTS=${RESULTS:-$REPO/docs/results}
bench() {
	local pkg=$1 csv=$2 regex=$3
	shift 3
	local work
	work=$(mktemp -d "${TMPDIR:-/tmp}/cohort-exp.XXXXXX")
	trap 'rm -rf "$work"' RETURN
	mkdir -p "$RESULTS"
	(cd "$REPO" && go test -c -o "$work/t.test" "./$pkg")
	local load0 commit
	load0=$(cut -d' ' -f1 /proc/loadavg)
	commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
	echo "running $pkg $regex $* (load $load0); raw output in ${csv%.csv}.txt" >&2
	(cd "$REPO/$pkg" && "$work/t.test" -test.run '^$' -test.bench "$regex" "$@") | tee "${csv%.csv}.txt" >&2
	awk -v extra="date=$(date -u +%Y-%m-%dT%H:%MZ);commit=$commit;load1_start=$load0;load1_end=$(cut -d' ' -f1 /proc/loadavg)" \
		-f "$REPO/scripts/experiments/bench2csv.awk" "${csv%.csv}.txt" >"$csv"
	echo "wrote $csv" >&2
}
