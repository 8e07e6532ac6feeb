#!/usr/bin/env bash
# sources-figures.sh: the end-to-end figures of docs/sources.md. Three
# parties hold ROWS rows between them (a third each) in each source type in
# turn (CSV, Parquet, SQLite, PostgreSQL); `cohort sim` runs the sum job over
# them and /usr/bin/time reports wall time and the peak resident memory of
# the whole simulation (three nodes in one process).
#
#   scripts/sources-figures.sh [ROWS]      # default 1000000
#
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (initdb refuses root); skipped if initdb is
# missing. Everything is deleted at exit.
set -euo pipefail
ROWS=${1:-1000000}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work figures
go build -o "$work/cohort" ./cmd/cohort
cohort="$work/cohort"
per=$(( (ROWS + 2) / 3 ))
mkdir -p "$work/csv" "$work/parquet" "$work/sqlite" "$work/postgres"
for p in north south west; do
  awk -v n="$per" 'BEGIN { split("cardio neuro ortho paeds onco", w, " "); print "ward,v"; for (i = 0; i < n; i++) printf "%s,%g\n", w[i % 5 + 1], (i % 1000) / 4 }' > "$work/csv/$p.csv"
  "$cohort" data import "$work/csv/$p.csv" "$work/parquet/$p.parquet" >/dev/null
  "$cohort" data import "$work/csv/$p.csv" "sqlite:$work/sqlite/$p.db#admissions" >/dev/null
done
types="csv parquet sqlite"
if [ -x "$pgbin/initdb" ]; then
  pg_start "$work"
  for p in north south west; do
    "$cohort" data import "$work/csv/$p.csv" "postgres-env:COHORT_FIGURES_PG#$p" >/dev/null
  done
  types="$types postgres"
else
  echo "no initdb: skipping PostgreSQL" >&2
fi
spec() { # TYPE: the sum spec over that type's tables
  local p t
  echo "kind: sum"; echo "parties:"
  for p in north south west; do
    case $1 in
      csv) t="path: $p.csv" ;;
      parquet) t="path: $p.parquet" ;;
      sqlite) t="source: {sqlite: $p.db, table: admissions}" ;;
      postgres) t="source: {postgres_env: COHORT_FIGURES_PG, table: $p}" ;;
    esac
    echo "  - name: $p"; echo "    tables: [{name: admissions, $t}]"
  done
  echo "schema: {admissions: {ward: categorical, v: numeric}}"; echo "params: {column: v}"
}
echo "rows: $((per * 3)) ($per per party); cores: $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %9s %14s %s\n' source wall_s peak_rss_MiB sum
for t in $types; do
  spec "$t" > "$work/$t/spec.yaml"
  /usr/bin/time -f '%e %M' -o "$work/$t/time" "$cohort" sim --format json "$work/$t/spec.yaml" --out "$work/$t/out" > "$work/$t/result.json"
  read -r wall rss < "$work/$t/time"
  printf '%-9s %9s %14d %s\n' "$t" "$wall" $((rss / 1024)) "$(grep -o '"sum": *[0-9.e+]*' "$work/$t/result.json")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
