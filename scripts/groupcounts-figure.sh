#!/usr/bin/env bash
# groupcounts-figure.sh: the group-counts figure of docs/sources.md.
# `cohort data qid-test` over a table of ROWS rows (age, sex, zip: every
# column, pair and all three, so seven sets) held in PostgreSQL and in a
# CSV file; /usr/bin/time -v reports wall time and peak resident memory.
#
#   scripts/groupcounts-figure.sh [ROWS] [BINARY...]   # default 10000000, built from this tree
#
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (initdb refuses root). Deleted at exit.
set -euo pipefail
ROWS=${1:-10000000}
shift || true
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work groups
bins=("$@")
if [ ${#bins[@]} = 0 ]; then go build -o "$work/cohort" ./cmd/cohort; bins=("$work/cohort"); fi
pg_start "$work"
psql -q "$COHORT_FIGURES_PG" -c "CREATE TABLE people AS SELECT i % 90 AS age, (ARRAY['F','M'])[(i / 3) % 2 + 1] AS sex, (i * 7919) % 10000 AS zip FROM generate_series(0::bigint, $ROWS - 1) AS i" -c "VACUUM ANALYZE people"
psql -q "$COHORT_FIGURES_PG" -c "\\copy people TO '$work/people.csv' WITH (FORMAT csv, HEADER)"
chmod 644 "$work/people.csv"
for bin in "${bins[@]}"; do
  for src in "postgres-env:COHORT_FIGURES_PG#people" "$work/people.csv"; do
    echo "== $bin qid-test ${src##*/}, $ROWS rows; cores: $(nproc); uptime before: $(uptime)"
    /usr/bin/time -v -o "$work/time" "$bin" data qid-test "$src" --format json > "$work/out.json"
    echo "uptime after: $(uptime)"
    grep -E 'Elapsed|Maximum resident' "$work/time"
    md5sum < "$work/out.json"
  done
done
