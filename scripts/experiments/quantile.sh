#!/usr/bin/env bash
# quantile.sh: the quantile job's figures (docs/quantile.md, "over real
# nodes"): the median and 90th percentile over real in-process nodes; s/job,
# rounds, ms/round, bytes per party.
#
#   scripts/experiments/quantile.sh            # the doc's grid, 3 runs
#   QUICK=1 scripts/experiments/quantile.sh    # 3 and 5 parties, 1,000 rows each, 2 runs
#
# Writes docs/results/quantile.csv (and quantile.txt, the raw output).
source "$(dirname "$0")/lib.sh"
if [[ ${QUICK:-0} == 1 ]]; then
	COHORT_BENCH_ROWS=1000 bench quantile "$RESULTS/quantile.csv" QuantileRealNodes -test.benchtime 1x -test.count 2
else
	bench quantile "$RESULTS/quantile.csv" QuantileRealNodes -test.benchtime 1x -test.count 3 -test.timeout 3h
fi
"$REPO/scripts/experiments/plot.sh" "$RESULTS/quantile.csv" N s/job rows "quantile: median and 90th percentile" "$REPO/docs/figures/quantile.svg"
echo "$RESULTS/quantile.csv"
