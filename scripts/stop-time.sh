#!/usr/bin/env bash
# stop-time.sh: how long a real `cohort node run` takes to exit after SIGTERM
# while a peer is dead (killed with SIGKILL, so its connections were never
# closed). Three nodes on loopback, QUIC only; each run kills a follower,
# waits a second (the leader is then retrying it), sends SIGTERM to the
# leader and times its exit.
#
#   scripts/stop-time.sh [RUNS]        # default 5 runs
#
# Environment: COHORT (a built binary; default: built from this checkout),
# BASE_PORT (default 17600), VERBOSE=1 (print the leader's warnings).
# Needs jq and curl. Prints one line per run and leaves no process behind.
set -euo pipefail

RUNS=${1:-5}
BASE_PORT=${BASE_PORT:-17600}
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-stop.XXXXXX")
NAMES=(a b c)
PIDS=()

cleanup() {
	trap - EXIT
	for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

COHORT=${COHORT:-}
if [[ -z $COHORT ]]; then
	(cd "$REPO" && go build -o "$WORK/cohort" ./cmd/cohort)
	COHORT=$WORK/cohort
fi
ms() { echo $(($(date +%s%N) / 1000000)); }

for run in $(seq "$RUNS"); do
	rm -rf "${WORK:?}"/run && mkdir "$WORK/run"
	MEMBERS=()
	for i in "${!NAMES[@]}"; do
		MEMBERS+=("$("$COHORT" node init --name "${NAMES[$i]}" --dir "$WORK/run/${NAMES[$i]}" \
			--listen "/ip4/127.0.0.1/udp/$((BASE_PORT + i + 1))/quic-v1" --format json)")
		echo "http: 127.0.0.1:$((BASE_PORT + 100 + i + 1))" >>"$WORK/run/${NAMES[$i]}/node.yaml"
	done
	{
		echo "members:"
		for m in "${MEMBERS[@]}"; do
			printf '%s\n' "$m" | jq -r '"  - name: \(.name)\n    peer_id: \(.peer_id)\n    addrs:", (.addrs[] | "      - \(.)")'
		done
	} >"$WORK/run/consortium.yaml"
	PIDS=()
	for name in "${NAMES[@]}"; do
		cp "$WORK/run/consortium.yaml" "$WORK/run/$name/"
		"$COHORT" node run --config "$WORK/run/$name/node.yaml" >"$WORK/run/$name.log" 2>&1 &
		PIDS+=($!)
	done
	leader=""
	for _ in $(seq 150); do
		leader=$(curl -fsS --max-time 1 -H "Authorization: Bearer $(cat "$WORK/run/${NAMES[0]}/api.token")" "http://127.0.0.1:$((BASE_PORT + 101))/status" 2>/dev/null | jq -r '.leader // ""' || true)
		[[ -n $leader ]] && break
		sleep 0.1
	done
	[[ -n $leader ]] || { echo "no leader" >&2; exit 1; }
	for i in "${!NAMES[@]}"; do
		[[ ${NAMES[$i]} == "$leader" ]] && lpid=${PIDS[$i]} || dead=${PIDS[$i]}
	done
	kill -KILL "$dead"
	wait "$dead" 2>/dev/null || true
	sleep 1
	t0=$(ms)
	kill -TERM "$lpid"
	while kill -0 "$lpid" 2>/dev/null; do sleep 0.01; done
	t1=$(ms)
	wait "$lpid" 2>/dev/null && rc=0 || rc=$?
	alarming=$(grep -c -E 'level=(WARN|ERROR)|\[(WARN|ERROR)\]' "$WORK/run/$leader.log" || true)
	[[ ${VERBOSE:-0} == 1 ]] && grep -E 'level=(WARN|ERROR)|\[(WARN|ERROR)\]' "$WORK/run/$leader.log" >&2
	printf 'run %d: leader %s stopped %d ms after SIGTERM (exit %d, %d warn/error lines in its log)\n' \
		"$run" "$leader" "$((t1 - t0))" "$rc" "$alarming"
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
done
