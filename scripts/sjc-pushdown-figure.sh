#!/usr/bin/env bash
# sjc-pushdown-figure.sh: the sjc figure of docs/sources.md ("sjc over a
# fact table in PostgreSQL"). Party north holds a fact table F of ROWS rows
# in PostgreSQL (keys d1 and d2, a measure m of MVALS values, the class);
# parties south and west each hold a dimension table of DIMS rows (a
# numeric and a categorical attribute) in the same server. The sjc job
# over F.d1 = D1.k and F.d2 = D2.k runs over three real `cohort node run`
# processes (scripts/local-cluster.sh with SPEC, NODE_TABLES and PEAK=1:
# the job's wall time from submit to result and each node's peak resident
# memory), once per BINARY and, for a binary that has it, per value of
# node.yaml sjc_group_rows in GROUP (default "0 1 auto"; 0: false, row by
# row, as before it existed; 1: true, distinct rows grouped by the server;
# auto: each node chooses per table from an estimate, printed from the
# nodes' logs; none: no line, the binary's default, for a binary from
# before the setting), on the same tables; then psql alone runs the fact party's
# GROUP BY, timed.
#
#   [DIMS=100] [MVALS=10] [GROUP="0 1 auto"] [TIMEOUT=s] scripts/sjc-pushdown-figure.sh [ROWS] [BINARY...]
#
# ROWS defaults to 10000000, BINARY to one built from this tree. F's rows
# repeat: d1 = i mod DIMS, d2 = (i div DIMS) mod DIMS, m = (i div DIMS^2)
# mod MVALS over the row number i, so F has at most 2·DIMS²·MVALS distinct
# rows over the columns the job reads. The class is "yes" when (m > MVALS/2
# and D1.x > 40) or D2.x < 30, flipped where i·7919 mod 10 = 0 (one row in
# ten; since that is i mod 10, a function of d1 when 10 divides DIMS, the
# flip follows d1 and a cell of (d1, d2, m) has one class). Each binary's
# result is printed with the md5 of its tree skeleton, which must agree
# (SHOW=1 prints the whole output).
#
# PostgreSQL: a throwaway cluster on a Unix socket in the work dir, run as
# the postgres user when root (scripts/lib/pg.sh). Deleted at exit.
set -euo pipefail
ROWS=${1:-10000000}
DIMS=${DIMS:-100}
MVALS=${MVALS:-10}
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_work sjc-pushdown
binaries=("${@:2}")
if [ ${#binaries[@]} = 0 ]; then go build -o "$work/cohort" ./cmd/cohort; binaries=("$work/cohort"); fi
pg_start "$work"
t0=$(date +%s)
psql -q "$COHORT_FIGURES_PG" \
  -c "CREATE TABLE d1 AS SELECT 'k' || i AS k, ((i * 37) % 100)::float8 AS x, 'c' || ((i * 11) % 4) AS c FROM generate_series(0, $DIMS - 1) AS i" \
  -c "CREATE TABLE d2 AS SELECT 'k' || i AS k, ((i * 53) % 100)::float8 AS x, 'c' || ((i * 7) % 4) AS c FROM generate_series(0, $DIMS - 1) AS i" \
  -c "CREATE TABLE f AS SELECT 'k' || a AS d1, 'k' || b AS d2, m::float8 AS m,
        CASE WHEN (((m > $MVALS / 2 AND (a * 37) % 100 > 40) OR (b * 53) % 100 < 30)) <> ((i * 7919) % 10 = 0) THEN 'yes' ELSE 'no' END AS class
      FROM (SELECT i, i % $DIMS AS a, (i / $DIMS) % $DIMS AS b, (i / ($DIMS * $DIMS)) % $MVALS AS m
            FROM generate_series(0::bigint, $ROWS - 1) AS i) AS s" \
  -c "VACUUM ANALYZE f" -c "VACUUM ANALYZE d1" -c "VACUUM ANALYZE d2"
echo "tables built in $(($(date +%s) - t0)) s; F: $ROWS rows, $(psql -qAt "$COHORT_FIGURES_PG" -c "SELECT count(*) FROM (SELECT DISTINCT d1, d2, m, class FROM f) AS g") distinct over (d1, d2, m, class); D1, D2: $DIMS rows"
cat > "$work/spec.yaml" <<'EOF'
kind: sjc
parties:
  - {name: north, tables: [{name: F, path: F}]}
  - {name: south, tables: [{name: D1, path: D1}]}
  - {name: west, tables: [{name: D2, path: D2}]}
schema:
  F: {d1: key, d2: key, m: numeric, class: class}
  D1: {k: key, x: numeric, c: categorical}
  D2: {k: key, x: numeric, c: categorical}
join: ["F.d1 = D1.k", "F.d2 = D2.k"]
EOF
# Every node maps the three names; each reads only its own party's table.
catalogue=$'F: {postgres_env: COHORT_FIGURES_PG, table: f}\n  D1: {postgres_env: COHORT_FIGURES_PG, table: d1}\n  D2: {postgres_env: COHORT_FIGURES_PG, table: d2}'
for cohort in "${binaries[@]}"; do
for group in ${GROUP:-0 1 auto}; do
  case $group in
    none) setting="" ;; # the binary's default (one from before the setting refuses it)
    0) setting="sjc_group_rows: false" ;;
    1) setting="sjc_group_rows: true" ;;
    *) setting="sjc_group_rows: $group" ;;
  esac
  echo "== $cohort, ${setting:-no sjc_group_rows}: cores: $(nproc); uptime before: $(uptime)"
  rm -rf "$work/logs"
  LOG_LEVEL=info LOGS=$work/logs NODE_YAML=$setting NODE_TABLES=$catalogue COHORT=$cohort SPEC=$work/spec.yaml PEAK=1 TIMEOUT=${TIMEOUT:-3600} \
    scripts/local-cluster.sh 3 >"$work/out" 2>"$work/cluster.log" || { tail -n 40 "$work/cluster.log" >&2; exit 1; }
  echo "uptime after: $(uptime)"
  # Each node's choice per table (auto), from its own log.
  grep -ho 'sjc: distinct rows estimated.*' "$work"/logs/*.log 2>/dev/null | grep -o 'table=[^ ]* rows=[^ ]* distinct=[^ ]* how="*[a-z ]*"* grouped=[a-z]*' || true
  if [ "${SHOW:-0}" = 1 ]; then cat "$work/out"; fi
  grep -E '^peak:' "$work/out"
  # The committed result: the skeleton (node ids, owners, class counts)
  # and its measures; the md5 of the tree skeleton must agree.
  sed -n '/^{/,/^}/p' "$work/out" >"$work/result.json"
  jq -c '{nodes, leaves, levels, anonymity, timing}' "$work/result.json"
  echo "skeleton md5: $(jq -S -c '.skeleton' "$work/result.json" | md5sum | cut -c1-12)"
done
done
echo "psql alone, the fact party's GROUP BY:"
/usr/bin/time -f '%e s, %M KiB' psql -qAt "$COHORT_FIGURES_PG" \
  -c "SELECT count(*) FROM (SELECT d1, d2, m, class, count(*) FROM f GROUP BY d1, d1::text, d2, d2::text, m, m::text, class, class::text) AS g"
