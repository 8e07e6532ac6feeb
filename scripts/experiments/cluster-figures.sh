#!/usr/bin/env bash
# cluster-figures.sh: wall time and bytes of the bundled jobs as separate node
# processes in network namespaces (scripts/cluster.sh), on the LAN and WAN
# profiles, with 3 and 5 nodes; one CSV row per run.
#
#   scripts/experiments/cluster-figures.sh [REPS]      # default 1 run per cell
#
# Writes docs/results/cluster.csv (job, profile, nodes, rep, shaping,
# election_ms, wall_s, job_bytes = the parties' message bytes from result.json,
# wire_bytes = what every node's eth0 sent during the job, Raft and QUIC
# included, load = 1-minute load average at the end) and prints its path.
# and a plot per job, docs/figures/cluster-JOB.svg (wall time by nodes, one line per profile).
# Needs what scripts/cluster.sh needs (root, iproute2). JOBS, PROFILES and
# SIZES override the cells, e.g. JOBS="sum" PROFILES="lan" SIZES="3".
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-1}
JOBS=${JOBS:-"sum quantile bicluster"}
PROFILES=${PROFILES:-"lan wan"}
SIZES=${SIZES:-"3 5"}
CSV=${CSV:-$REPO/docs/results/cluster.csv}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-figures.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/cohort" "$REPO/cmd/cohort"
go build -o "$WORK/cohort-netshape" "$REPO/cmd/cohort-netshape"
export COHORT=$WORK/cohort NETSHAPE=$WORK/cohort-netshape KEYS_CACHE=$WORK/keys
mkdir -p "$(dirname "$CSV")"
echo "job,profile,nodes,rep,shaping,election_ms,wall_s,job_bytes,wire_bytes,load1" >"$CSV"
for job in $JOBS; do
	for profile in $PROFILES; do
		for n in $SIZES; do
			for ((rep = 1; rep <= REPS; rep++)); do
				out=$WORK/out-$job-$profile-$n-$rep
				"$REPO/scripts/cluster.sh" -n "$n" --profile "$profile" "$REPO/examples/$job/spec.yaml" "$out" 2>"$WORK/log" ||
					{ cat "$WORK/log" >&2; exit 1; }
				jq -r --arg job "$job" --arg rep "$rep" --slurpfile res "$out/result.json" \
					'[$job, .profile, .nodes, $rep, .shaping, .election_ms, .wall_seconds,
					  ($res[0].bytes | add), (.wire_tx_bytes | add), (.load | split(" ")[0])] | @csv' \
					"$out/run.json" | tr -d '"' >>"$CSV"
				tail -n 1 "$CSV"
			done
		done
	done
done
for job in $JOBS; do
	awk -F, -v j="$job" 'NR == 1 || $1 == j' "$CSV" >"$WORK/$job.csv"
	"$REPO/scripts/experiments/plot.sh" "$WORK/$job.csv" nodes wall_s profile \
		"$job over node processes in network namespaces (wall s)" "$REPO/docs/figures/cluster-$job.svg"
done
echo "wrote $CSV and docs/figures/cluster-JOB.svg"
