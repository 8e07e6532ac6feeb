#!/usr/bin/env bash
# parquet-figure.sh: the Parquet figure of docs/sources.md (issue 35).
# Three parties each hold ROWS rows in a Parquet file (ward, v; v = (i mod
# 1000) / 4, built through a CSV by `cohort data import`); three real node
# processes (scripts/local-cluster.sh) run the sum and then the median of v,
# each node streaming its file (a row group at a time, only column v), and
# the job's wall time and each node's peak resident memory are printed.
#
#   scripts/parquet-figure.sh [ROWS] [BINARY]   # default 50000000, built from this tree
#
# TIMEOUT (seconds) bounds each job; KIND="sum" or "quantile" runs one.
set -euo pipefail
ROWS=${1:-50000000}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/cohort-parquet-XXXXXX)
trap 'rm -rf "$work"' EXIT
cohort=${2:-}
if [ -z "$cohort" ]; then go build -o "$work/cohort" ./cmd/cohort; cohort="$work/cohort"; fi
for p in north south west; do
  awk -v n="$ROWS" 'BEGIN { split("cardio neuro ortho paeds onco", w, " "); print "ward,v"; for (i = 0; i < n; i++) printf "%s,%g\n", w[i % 5 + 1], (i % 1000) / 4 }' > "$work/$p.csv"
  "$cohort" data import "$work/$p.csv" "$work/$p.parquet" >/dev/null
  rm "$work/$p.csv"
done
echo "rows: $ROWS per party (Parquet, $(du -h "$work/north.parquet" | cut -f1) each), 3 parties; cores: $(nproc)"
for kind in ${KIND:-sum quantile}; do
  {
    echo "kind: $kind"; echo "parties:"
    for p in north south west; do echo "  - {name: $p, tables: [{name: admissions, path: $p.parquet}]}"; done
    echo "schema: {admissions: {ward: categorical, v: numeric}}"
    if [ "$kind" = quantile ]; then echo "params: {column: v, quantiles: [0.5]}"; else echo "params: {column: v}"; fi
  } > "$work/$kind.yaml"
  echo "$kind over real node processes; uptime before: $(uptime)"
  TABLES=$work COHORT=$cohort SPEC=$work/$kind.yaml PEAK=1 TIMEOUT=${TIMEOUT:-3600} scripts/local-cluster.sh 3 2>"$work/cluster.log" |
    grep -E '^peak:|"(sum|value|rounds)"' || { tail -n 40 "$work/cluster.log" >&2; exit 1; }
  echo "uptime after: $(uptime)"
done
