#!/usr/bin/env bash
# boost-pushdown-figure.sh: the boost figure of docs/sources.md ("boost's
# per-bin sums, pushed down"). Party north holds a fact table F of ROWS
# rows in PostgreSQL (keys d1 and d2, a continuous measure x, the class);
# parties south and west each hold a dimension table of DIMS rows (one
# numeric attribute) in the same server. The boost job over
# F.d1 = D1.k and F.d2 = D2.k runs over three real `cohort node run`
# processes (scripts/local-cluster.sh with SPEC, NODE_TABLES and PEAK=1:
# the job's wall time from submit to result, each node's peak resident
# memory, and the result's seconds per step, whose level steps over TREES
# give the time per tree), once per BINARY and per value of node.yaml
# boost_group_rows in GROUP (default "0 1 auto"; 0: false, row by row;
# 1: true, binned groups computed by the server; auto: each node chooses
# per table from an estimate, printed from the nodes' logs), on the same
# tables; then psql alone runs the fact party's grouping query, timed.
#
#   [DIMS=20] [TREES=3] [DEPTH=3] [BINS=32] [GROUP="0 1 auto"] [TIMEOUT=s] scripts/boost-pushdown-figure.sh [ROWS] [BINARY...]
#
# ROWS defaults to 1000000, BINARY to one built from this tree. Over the
# row number i: d1 = i mod DIMS, d2 = (i div DIMS) mod 5, and x = (i·7919
# mod 1000003)/1000, nearly every row's own value; so F's rows are nearly
# all distinct, but over what boost reads (d1, d2, x's bin, the class) at
# most DIMS·5·BINS·2 groups. The class is "yes" when x > 500 and D1.z > 40
# or D2.w < 30, flipped where i mod 10 = 0. Each run prints the md5 of the
# model (result.json's, released), which must agree (SHOW=1 prints the
# whole output).
#
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (scripts/lib/pg.sh). Deleted at exit.
set -euo pipefail
ROWS=${1:-1000000}
DIMS=${DIMS:-20}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work boost-pushdown
binaries=("${@:2}")
if [ ${#binaries[@]} = 0 ]; then go build -o "$work/cohort" ./cmd/cohort; binaries=("$work/cohort"); fi
pg_start "$work"
t0=$(date +%s)
psql -q "$COHORT_FIGURES_PG" \
  -c "CREATE TABLE d1 AS SELECT 'k' || i AS k, ((i * 37) % 100)::float8 AS z FROM generate_series(0, $DIMS - 1) AS i" \
  -c "CREATE TABLE d2 AS SELECT 'k' || i AS k, ((i * 53) % 100)::float8 AS w FROM generate_series(0, 4) AS i" \
  -c "CREATE TABLE f AS SELECT 'k' || a AS d1, 'k' || b AS d2, x,
        CASE WHEN ((x > 500 AND (a * 37) % 100 > 40) OR (b * 53) % 100 < 30) <> (i % 10 = 0) THEN 'yes' ELSE 'no' END AS class
      FROM (SELECT i, i % $DIMS AS a, (i / $DIMS) % 5 AS b, ((i * 7919) % 1000003) / 1000.0::float8 AS x
            FROM generate_series(0::bigint, $ROWS - 1) AS i) AS s" \
  -c "VACUUM ANALYZE f" -c "VACUUM ANALYZE d1" -c "VACUUM ANALYZE d2"
echo "tables built in $(($(date +%s) - t0)) s; F: $ROWS rows, $(psql -qAt "$COHORT_FIGURES_PG" -c "SELECT count(DISTINCT x) FROM f") distinct x; D1: $DIMS rows, D2: 5 rows"
cat > "$work/spec.yaml" <<EOF
kind: boost
parties:
  - {name: north, tables: [{name: F, path: F}]}
  - {name: south, tables: [{name: D1, path: D1}]}
  - {name: west, tables: [{name: D2, path: D2}]}
schema:
  F: {d1: key, d2: key, x: numeric, class: class}
  D1: {k: key, z: numeric}
  D2: {k: key, w: numeric}
join: ["F.d1 = D1.k", "F.d2 = D2.k"]
params: {trees: ${TREES:-3}, max_depth: ${DEPTH:-3}, bins: ${BINS:-32}, release: true}
EOF
# Every node maps the three names; each reads only its own party's table.
catalogue=$'F: {postgres_env: COHORT_FIGURES_PG, table: f}\n  D1: {postgres_env: COHORT_FIGURES_PG, table: d1}\n  D2: {postgres_env: COHORT_FIGURES_PG, table: d2}'
for cohort in "${binaries[@]}"; do
for group in ${GROUP:-0 1 auto}; do
  case $group in
    none) setting="" ;; # the binary's default (one from before the setting refuses it)
    0) setting="boost_group_rows: false" ;;
    1) setting="boost_group_rows: true" ;;
    *) setting="boost_group_rows: $group" ;;
  esac
  echo "== $cohort, ${setting:-no boost_group_rows}: cores: $(nproc); uptime before: $(uptime)"
  rm -rf "$work/logs"
  LOG_LEVEL=info LOGS=$work/logs NODE_YAML=$setting NODE_TABLES=$catalogue COHORT=$cohort SPEC=$work/spec.yaml PEAK=1 TIMEOUT=${TIMEOUT:-3600} \
    scripts/local-cluster.sh 3 >"$work/out" 2>"$work/cluster.log" || { tail -n 40 "$work/cluster.log" >&2; exit 1; }
  echo "uptime after: $(uptime)"
  # Each node's choice per table (auto) and its groups, from its own log.
  grep -ho 'boost: groups estimated.*\|boost: table read as binned groups.*' "$work"/logs/*.log 2>/dev/null || true
  if [ "${SHOW:-0}" = 1 ]; then cat "$work/out"; fi
  grep -E '^peak:' "$work/out"
  sed -n '/^{/,/^}/p' "$work/out" >"$work/result.json"
  jq -c '{timing, per_tree_level_s: ((.timing.level // 0) / '"${TREES:-3}"')}' "$work/result.json"
  echo "model md5: $(jq -S -c '.model' "$work/result.json" | md5sum | cut -c1-12)"
done
done
# psql alone: the fact party's pushed-down work as the server does it, its
# percentiles (BINS a power of two: k/BINS is exact) and its grouping by
# the bins of x under them, in the node's query's form (the bin as
# BINS-1 - width_bucket(-x, the cuts negated)).
bins=${BINS:-32}
neg=$(psql -qAt "$COHORT_FIGURES_PG" -c "SELECT string_agg((-c)::text || '::float8', ', ' ORDER BY c DESC) FROM unnest((SELECT percentile_disc(ARRAY(SELECT k / $bins.0::float8 FROM generate_series(1, $bins - 1) AS k)) WITHIN GROUP (ORDER BY x) FROM f)) AS c")
m=$(echo "$neg" | tr ',' '\n' | wc -l)
bin="($m - width_bucket(-(x::float8), ARRAY[$neg]))"
echo "psql alone, the fact party's percentiles, then its grouping by (class, d1, d2, the bin of x):"
/usr/bin/time -f '%e s, %M KiB' psql -qAt "$COHORT_FIGURES_PG" -c "SELECT percentile_disc(ARRAY(SELECT k / $bins.0::float8 FROM generate_series(1, $bins - 1) AS k)) WITHIN GROUP (ORDER BY x) FROM f" >/dev/null
/usr/bin/time -f '%e s, %M KiB' psql -qAt "$COHORT_FIGURES_PG" \
  -c "SELECT count(*) FROM (SELECT class, d1, d2, $bin, count(*) FROM f GROUP BY class, class::text, d1, d1::text, d2, d2::text, $bin) AS g"
