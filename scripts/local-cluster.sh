#!/usr/bin/env bash
# local-cluster.sh: run a real Cohort consortium of N node processes on
# loopback, submit the bundled sum example to it, print the result and one
# node's audit summary, then stop every node.
#
#   scripts/local-cluster.sh            # 3 nodes: north, south, west
#   scripts/local-cluster.sh 5          # 5 nodes (the extra ones hold no table)
#
# Environment:
#   COHORT     a built cohort binary (default: built from this checkout into the work dir)
#   BASE_PORT  first libp2p TCP port (default 17400); node i uses BASE_PORT+i,
#              and HTTP status on BASE_PORT+100+i, all on 127.0.0.1
#   KEEP=1     keep the work dir (node data dirs, ledgers) for inspection
#   TIMEOUT    seconds to wait for a leader and for the job (default 120 each)
#
# Needs go (unless COHORT is set), jq and curl. Everything listens on 127.0.0.1 only. The nodes are stopped by a trap on
# exit, whatever happens, so no process is left behind.
set -euo pipefail

N=${1:-3}
BASE_PORT=${BASE_PORT:-17400}
TIMEOUT=${TIMEOUT:-120}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SPEC=$REPO/examples/sum/spec.yaml
TABLES=$REPO/examples/sum

if ! [[ $N =~ ^[0-9]+$ ]] || (( N < 3 )); then
	echo "usage: $0 [N>=3]  (the example job needs the parties north, south and west)" >&2
	exit 2
fi

# Party names: the three of examples/sum/spec.yaml first, then extra members.
NAMES=(north south west)
for ((i = 4; i <= N; i++)); do NAMES+=("org$i"); done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-cluster.XXXXXX")
PIDS=()

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	# give each node a few seconds to close Raft and its ledger, then insist
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${KEEP:-0} == 1 ]]; then
		echo "work dir kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { printf '[%5.1fs] %s\n' "$(($(date +%s%N) / 1000000 - START_MS))e-3" "$*" >&2; }
START_MS=$(($(date +%s%N) / 1000000))

COHORT=${COHORT:-}
if [[ -z $COHORT ]]; then
	log "building cohort"
	(cd "$REPO" && go build -o "$WORK/cohort" ./cmd/cohort)
	COHORT=$WORK/cohort
fi

# 1. node init on each "machine", with distinct loopback ports.
log "initialising ${N} nodes in $WORK"
MEMBERS=()
for i in "${!NAMES[@]}"; do
	name=${NAMES[$i]}
	port=$((BASE_PORT + i + 1))
	MEMBERS+=("$("$COHORT" node init --name "$name" --dir "$WORK/$name" \
		--listen "/ip4/127.0.0.1/tcp/$port" --format json)")
	# tables_dir: the example's dir, so data/NAME.csv in the spec resolves;
	# http: the optional status/metrics listener.
	sed -i "s#^tables_dir:.*#tables_dir: $TABLES#" "$WORK/$name/node.yaml"
	echo "http: 127.0.0.1:$((BASE_PORT + 100 + i + 1))" >>"$WORK/$name/node.yaml"
done

# 2. the consortium file, built from every member's `node init --format json`
#    (in real life each organisation sends its JSON to the others).
{
	echo "members:"
	for m in "${MEMBERS[@]}"; do
		printf '%s\n' "$m" | jq -r '"  - name: \(.name)\n    peer_id: \(.peer_id)\n    addrs:", (.addrs[] | "      - \(.)")'
	done
} >"$WORK/consortium.yaml"
for name in "${NAMES[@]}"; do cp "$WORK/consortium.yaml" "$WORK/$name/consortium.yaml"; done

# 3. the threshold key, by a trusted dealer: --out is the parent of the data
#    dirs, so each MEMBER/keys lands in that member's data dir directly.
log "dealing a 2048-bit threshold key"
"$COHORT" keys deal --members "$(IFS=,; echo "${NAMES[*]}")" --bits 2048 --out "$WORK" >&2

# 4. start the nodes.
for name in "${NAMES[@]}"; do
	"$COHORT" node run --config "$WORK/$name/node.yaml" --log-level warn \
		>"$WORK/$name.log" 2>&1 &
	PIDS+=($!)
done
log "started ${N} nodes (pids ${PIDS[*]}); logs in $WORK/NAME.log"

# 5. wait until every node reports the same leader on /status.
deadline=$((SECONDS + TIMEOUT))
while :; do
	leaders=()
	for i in "${!NAMES[@]}"; do
		l=$(curl -fsS --max-time 1 -H "Authorization: Bearer $(cat "$WORK/${NAMES[$i]}/api.token")" \
			"http://127.0.0.1:$((BASE_PORT + 100 + i + 1))/status" 2>/dev/null |
			jq -r '.leader // ""' 2>/dev/null || true)
		leaders+=("$l")
	done
	if [[ -n ${leaders[0]} ]] && [[ $(printf '%s\n' "${leaders[@]}" | sort -u | wc -l) == 1 ]]; then
		break
	fi
	for pid in "${PIDS[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "a node exited early; its log:" >&2
			cat "$WORK"/*.log >&2
			exit 1
		fi
	done
	if ((SECONDS > deadline)); then
		echo "no agreed leader after ${TIMEOUT}s; logs:" >&2
		tail -n 20 "$WORK"/*.log >&2
		exit 1
	fi
	sleep 0.2
done
log "leader: ${leaders[0]}"

# 6. submit the example through the last node (a follower or the leader,
#    either works) and wait for the result.
SUBMITTER=${NAMES[$((N - 1))]}
log "submitting $SPEC via $SUBMITTER"
timeout "$TIMEOUT" "$COHORT" job submit "$SPEC" --wait --config "$WORK/$SUBMITTER/node.yaml"

# 7. what north disclosed.
echo
"$COHORT" audit --dir "$WORK/north"
log "done; stopping the nodes"
