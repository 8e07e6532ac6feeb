#!/usr/bin/env bash
# bicluster.sh: the bicluster job's figures (docs/bicluster.md, "the job over
# real nodes"): Phoenix over real in-process nodes by data size; s/job,
# iterations, biclusters found, bytes per party.
#
#   scripts/experiments/bicluster.sh            # the doc's sizes, 3 runs
#   QUICK=1 scripts/experiments/bicluster.sh    # one small size, 1 run
#
# Writes docs/results/bicluster.csv (and bicluster.txt, the raw output).
source "$(dirname "$0")/lib.sh"
if [[ ${QUICK:-0} == 1 ]]; then
	COHORT_BENCH_ELEMENTS=${COHORT_BENCH_ELEMENTS:-2000} bench bicluster "$RESULTS/bicluster.csv" JobRealNodes -test.benchtime 1x -test.count 1
else
	bench bicluster "$RESULTS/bicluster.csv" JobRealNodes -test.benchtime 1x -test.count 3 -test.timeout 3h
fi
"$REPO/scripts/experiments/plot.sh" "$RESULTS/bicluster.csv" elements s/job "" "bicluster: Phoenix job" "$REPO/docs/figures/bicluster.svg"
echo "$RESULTS/bicluster.csv"
