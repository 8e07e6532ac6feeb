#!/usr/bin/env bash
# tables35-figure.sh: the figures of docs/sources.md's "Kinds that need
# rows" (issue 35's last gap).
#
# 1. coherence over PAIRS tid,item pairs in PostgreSQL (transactions of
#    five items; the private item "ill" in half of them), params h 0.3, so
#    Theorem 3 rules the job out: `cohort sim` with one party, timed with
#    /usr/bin/time -v, once per BINARY (a binary from before the counts
#    loads the pairs, then refuses; one from after counts them where they
#    live and refuses without loading).
# 2. bicluster's Den: a PostgreSQL table of ROWS rows × 20 columns, the
#    layer's ColumnSums (one query) against the load Phoenix needs
#    (TestFigureDenQueryAgainstLoad, built from this tree).
#
#   [ROWS=1000000] scripts/tables35-figure.sh [PAIRS] [BINARY...]
#
# PAIRS defaults to 10000000, BINARY to one built from this tree.
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (scripts/lib/pg.sh). Deleted at exit.
set -euo pipefail
PAIRS=${1:-10000000}
ROWS=${ROWS:-1000000}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work tables35
bins=("${@:2}")
if [ ${#bins[@]} = 0 ]; then go build -o "$work/cohort" ./cmd/cohort; bins=("$work/cohort"); fi
pg_start "$work"
t0=$(date +%s)
psql -q "$COHORT_FIGURES_PG" -c "CREATE TABLE baskets AS SELECT 'c' || (i / 5) AS tid,
    CASE WHEN i % 5 = 4 AND (i / 5) % 2 = 0 THEN 'ill' ELSE 'p' || ((i * 7919) % 50) END AS item,
    'kept home ' || i AS secret
  FROM generate_series(0::bigint, $PAIRS - 1) AS i" -c "VACUUM ANALYZE baskets"
echo "baskets built in $(($(date +%s) - t0)) s: $PAIRS pairs"
cat > "$work/spec.yaml" <<YAML
kind: coherence
parties:
  - name: shop
    tables: [{name: baskets, source: {postgres_env: COHORT_FIGURES_PG, table: baskets}}]
params: {h: 0.3, k: 5, p: 2, private: [ill]}
YAML
for bin in "${bins[@]}"; do
  rm -rf "$work/out"
  echo "== $bin coherence, $PAIRS pairs; cores: $(nproc); uptime before: $(uptime)"
  /usr/bin/time -v -o "$work/time" "$bin" sim "$work/spec.yaml" --out "$work/out" > "$work/sim.log" 2>&1 || true
  echo "uptime after: $(uptime)"
  grep -E 'Elapsed|Maximum resident' "$work/time"
  grep -oE 'params\.[hk][^"]*' "$work/sim.log" | head -1 || tail -3 "$work/sim.log"
done
psql -q "$COHORT_FIGURES_PG" -c "CREATE TABLE m AS SELECT i::text AS id, $(for j in $(seq 0 19); do printf '((i * %d) %% 1000 - 300) / 10.0::float8 AS c%d%s' $((7919 + 2 * j)) "$j" "$([ "$j" = 19 ] || echo ,)"; done)
  FROM generate_series(0::bigint, $ROWS - 1) AS i" -c "VACUUM ANALYZE m"
echo "== bicluster Den, $ROWS rows × 20 columns; uptime before: $(uptime)"
COHORT_FIGURE_DEN_PG="$COHORT_FIGURES_PG" COHORT_FIGURE_DEN_TABLE=m go test ./bicluster/ -run TestFigureDenQueryAgainstLoad -count=1 -v | grep -E 'Den query|ok|FAIL|_test.go'
echo "uptime after: $(uptime)"
