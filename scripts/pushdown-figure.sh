#!/usr/bin/env bash
# pushdown-figure.sh: the "Pushed down" figure of docs/sources.md. Three
# parties each hold ROWS rows in PostgreSQL (generate_series); `cohort sim`
# sums column v over them, or finds its median with KIND=quantile (three
# nodes in one process), and /usr/bin/time -v reports wall time and peak
# resident memory of the whole simulation.
#
#   [KIND=quantile] [RUNS=n] scripts/pushdown-figure.sh [ROWS] [BINARY...]   # default 3000000, built from this tree
#
# Several binaries (before and after a change) run on the same tables, RUNS
# rounds (default 1) interleaved. Each binary uses the simulation key cache
# as it would (COHORT_SIM_KEY_CACHE, default the user cache dir): an
# untimed first run of each fills it, so that every timed run is warm.
#
# NODES=processes runs the job over three real node processes instead, with
# the first BINARY
# (scripts/local-cluster.sh with SPEC and PEAK=1: the job's wall time and
# each node's peak resident memory), then psql alone runs each party's
# query, timed; TIMEOUT (seconds) bounds the job over processes, and
# KIND="sum quantile" runs both jobs over one set of tables.
#
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (initdb refuses root). Deleted at exit.
set -euo pipefail
ROWS=${1:-3000000}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work pushdown
binaries=("${@:2}")
if [ ${#binaries[@]} = 0 ]; then go build -o "$work/cohort" ./cmd/cohort; binaries=("$work/cohort"); fi
pg_start "$work"
for p in north south west; do
  psql -q "$COHORT_FIGURES_PG" -c "CREATE TABLE $p AS SELECT (ARRAY['cardio','neuro','ortho','paeds','onco'])[i % 5 + 1] AS ward, (i % 1000) / 4.0::float8 AS v FROM generate_series(0, $ROWS - 1) AS i" -c "VACUUM ANALYZE $p"
done
# spec KIND: the job over each party's table, for `cohort sim` (the
# source in the spec) or real nodes (the source in each node's catalogue).
spec() {
  echo "kind: $1"; echo "parties:"
  for p in north south west; do
    echo "  - name: $p"
    if [ "${NODES:-sim}" = processes ]; then echo "    tables: [{name: admissions, path: admissions}]"
    else echo "    tables: [{name: admissions, source: {postgres_env: COHORT_FIGURES_PG, table: $p}}]"; fi
  done
  echo "schema: {admissions: {ward: categorical, v: numeric}}"; if [ "$1" = quantile ]; then echo "params: {column: v, quantiles: [0.5]}"; else echo "params: {column: v}"; fi
}
if [ "${NODES:-sim}" = processes ]; then
  # KIND may list both ("sum quantile"): one set of tables, one job each.
  echo "rows: $ROWS per party, 3 parties; cores: $(nproc); uptime before: $(uptime)"
  for kind in ${KIND:-sum}; do
    spec "$kind" > "$work/spec.yaml"
    echo "$kind over real node processes:"
    NODE_TABLES='admissions: {postgres_env: COHORT_FIGURES_PG, table: NAME}' COHORT=${binaries[0]} SPEC=$work/spec.yaml PEAK=1 \
      TIMEOUT=${TIMEOUT:-3600} scripts/local-cluster.sh 3 2>"$work/cluster.log" |
      grep -E '^peak:|"(sum|value|rounds)"' || { tail -n 40 "$work/cluster.log" >&2; exit 1; }
    echo "uptime after: $(uptime)"
    if [ "$kind" = quantile ]; then q="SELECT count(*), count(*) FILTER (WHERE v <= 124.75) FROM"; else q="SELECT count(*), sum(v) FROM"; fi
    echo "psql alone ($q <party>, per party):"
    for p in north south west; do
      /usr/bin/time -f '%e s, %M KiB' psql -qAt "$COHORT_FIGURES_PG" -c "$q $p"
    done
  done
  exit 0
fi
spec "${KIND:-sum}" > "$work/spec.yaml"
for cohort in "${binaries[@]}"; do
  "$cohort" sim --format json "$work/spec.yaml" --out "$work/warm" > /dev/null; rm -rf "$work/warm"
done
for run in $(seq "${RUNS:-1}"); do
  for cohort in "${binaries[@]}"; do
    echo "== $cohort, run $run: rows: $ROWS per party, 3 parties; cores: $(nproc); uptime before: $(uptime)"
    /usr/bin/time -v -o "$work/time" "$cohort" sim --format json "$work/spec.yaml" --out "$work/out" > "$work/result.json"
    echo "uptime after: $(uptime)"
    grep -E 'Elapsed|Maximum resident|User time|System time' "$work/time"
    grep -oE '"(sum|value|rounds)": *[0-9.e+-]*' "$work/result.json"
    rm -rf "$work/out"
  done
done
