#!/usr/bin/env bash
# sum.sh: the sum job's figures (docs/secureagg.md, "over real nodes"): one
# secure aggregation round over real in-process nodes for 3, 5, 9 and 17
# parties and vectors of 50 and 10,000 values; ms/round, bytes per party.
#
#   scripts/experiments/sum.sh            # the full grid, 20 rounds x 3 counts (tens of minutes)
#   QUICK=1 scripts/experiments/sum.sh    # 3 and 5 parties, 50 values, 5 rounds x 2
#
# Writes docs/results/sum.csv (and sum.txt, the raw benchmark output).
source "$(dirname "$0")/lib.sh"
if [[ ${QUICK:-0} == 1 ]]; then
	for n in 3 5; do
		COHORT_BENCH_N=$n COHORT_BENCH_LEN=50 bench sum "$RESULTS/sum-n$n.csv" AggregateRealNodes -test.benchtime 5x -test.count 2
	done
	{ head -n 1 "$RESULTS/sum-n3.csv"; tail -q -n +2 "$RESULTS"/sum-n3.csv "$RESULTS"/sum-n5.csv; } >"$RESULTS/sum.csv"
	cat "$RESULTS"/sum-n3.txt "$RESULTS"/sum-n5.txt >"$RESULTS/sum.txt"
	rm -f "$RESULTS"/sum-n[35].csv "$RESULTS"/sum-n[35].txt
else
	bench sum "$RESULTS/sum.csv" AggregateRealNodes -test.benchtime 20x -test.count 3 -test.timeout 3h
fi
"$REPO/scripts/experiments/plot.sh" "$RESULTS/sum.csv" N ms/round len "sum: one aggregation round" "$REPO/docs/figures/sum.svg"
echo "$RESULTS/sum.csv"
