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
#   KILL_LEADER=1  then run the job again and SIGKILL the leader (a party: it
#              holds a table) while the job's aggregate step runs; print how
#              long after the kill the job ended and check that its total is
#              exact over the parties it includes (issue 36's recovery figure).
#              Every member is then a party of the sum and holds ROWS
#              generated rows (default 1000000), so that the kill lands
#              while the parties sum their rows, before any total is
#              decrypted (a total once decrypted may not be formed again
#              over fewer parties, and the default floor needs 3 parties
#              after the loss: run it with N >= 4; docs/security.md)
#   LOAD=JOBS  then run the example JOBS times one after another and JOBS
#              times submitted at once, check every total, and print both
#              wall times, their ratio, the Raft term on every node before
#              and after (an election raises it) and each node's RSS
#              (issue 36's figure for 500 concurrent jobs), with each node's
#              Go heap in use (HeapInuse), goroutines and its RSS split into
#              anonymous memory and mapped files (the Raft log's bbolt mmap)
#              and the key's fixed-base tables (mapped outside the Go heap,
#              part of anon); the first sample waits until every node with
#              paillier_tables: eager (node init's default) reports its
#              tables built; LOAD_SETTLE=SECONDS waits that long more
#   SPEC=FILE  submit this spec instead of the bundled sum example (its
#              parties must be the node names: north, south, west, ...).
#              Its tables may be database sources ({clickhouse_env: VAR} or
#              {postgres_env: VAR}): the nodes inherit this script's
#              environment, so VAR is read from it.
#   TABLES=DIR every node's tables_dir (default examples/sum)
#   NODE_TABLES=LINE  append `tables:` and LINE to every node.yaml, with
#              NAME in LINE replaced by the node's name: the node's own
#              catalogue (e.g. 'admissions: {clickhouse_env: CH, table: NAME}');
#              the default policy reads a database source only from it
#   NODE_YAML=LINE  append LINE to every node.yaml (a node setting, e.g.
#              'sjc_group_rows: true')
#   LOG_LEVEL=LEVEL  every node's --log-level (default warn)
#   LOGS=DIR   copy every node's log into DIR at exit
#   PEAK=1     after the job, print its wall time (submit to result) and
#              each node's peak resident memory (VmHWM) and the result
#              (docs/sources.md's figures over real node processes)
#   PROFILES=DIR  serve each node's Go profiles on 127.0.0.1 (node.yaml
#              pprof: BASE_PORT+200+i) and, with LOAD, save each node's heap
#              profile (after a GC) and goroutine dump at every stage of the
#              load as DIR/NAME-STAGE.heap and DIR/NAME-STAGE.goroutines;
#              compare two with go tool pprof -base
#
# Needs go (unless COHORT is set), jq and curl. Everything listens on 127.0.0.1 only. The nodes are stopped by a trap on
# exit, whatever happens, so no process is left behind.
set -euo pipefail

N=${1:-3}
BASE_PORT=${BASE_PORT:-17400}
TIMEOUT=${TIMEOUT:-120}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SPEC=${SPEC:-$REPO/examples/sum/spec.yaml}
TABLES=${TABLES:-$REPO/examples/sum}

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
	if [[ -n ${LOGS:-} ]]; then
		mkdir -p "$LOGS" && cp "$WORK"/*.log "$LOGS"/ 2>/dev/null || true
	fi
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

# api NAME PATH [CURL ARGS]: call the node's HTTP API with its token.
api() {
	local i name=$1 path=$2
	shift 2
	for i in "${!NAMES[@]}"; do [[ ${NAMES[$i]} == "$name" ]] && break; done
	curl -fsS --max-time 30 -H "Authorization: Bearer $(cat "$WORK/$name/api.token")" "$@" \
		"http://127.0.0.1:$((BASE_PORT + 100 + i + 1))$path"
}

# submit NAME: submit the spec through NAME's API and print the job id.
submit() { api "$1" /v1/jobs -X POST --data-binary "@$SPEC" | jq -r .id; }

# settle NAME ID...: wait until none of the jobs runs on NAME's view. It
# reads the running jobs only (queued and awaiting included), a page of at
# most 1,000 at a time, not every job of the log.
settle() {
	local name=$1 ids running off n page
	shift
	ids=$(printf '%s\n' "$@" | jq -R . | jq -s .)
	while :; do
		running=0 off=0
		while :; do
			page=$(api "$name" "/v1/jobs?status=running&limit=1000&offset=$off")
			n=$(jq length <<<"$page")
			running=$((running + $(jq --argjson ids "$ids" '[.[] | select(.id as $i | $ids | index($i))] | length' <<<"$page")))
			((n < 1000)) && break
			off=$((off + n))
		done
		((running == 0)) && return
		sleep 0.2
	done
}

# node_state [STAGE]: each node's Raft term, resident memory (anonymous
# and file-backed), Go heap in use and goroutines, one line; with PROFILES
# set and a STAGE, also each node's heap profile and goroutine dump.
node_state() {
	local i out="" metrics
	for i in "${!NAMES[@]}"; do
		metrics=$(api "${NAMES[$i]}" /metrics)
		out+=" ${NAMES[$i]}: term $(awk '$1 == "cohort_raft_term" {print $2}' <<<"$metrics")"
		out+=", RSS $(awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2}
			END {printf "%.0f MiB (anon %.0f, file %.0f)", r / 1024, a / 1024, f / 1024}' "/proc/${PIDS[$i]}/status")"
		out+=", heap $(awk '$1 == "go_memstats_heap_inuse_bytes" {printf "%.0f MiB", $2 / 1048576}' <<<"$metrics")"
		out+=", tables $(awk '$1 == "cohort_paillier_tables_bytes" {printf "%.0f MiB", $2 / 1048576}' <<<"$metrics")"
		out+=", goroutines $(awk '$1 == "go_goroutines" {print $2}' <<<"$metrics");"
		if [[ -n ${PROFILES:-} && -n ${1:-} ]]; then
			curl -fsS --max-time 60 -o "$PROFILES/${NAMES[$i]}-$1.heap" "http://127.0.0.1:$((BASE_PORT + 200 + i + 1))/debug/pprof/heap?gc=1"
			curl -fsS --max-time 60 -o "$PROFILES/${NAMES[$i]}-$1.goroutines" "http://127.0.0.1:$((BASE_PORT + 200 + i + 1))/debug/pprof/goroutine?debug=1"
		fi
	done
	out=${out# }
	echo "${out%;}"
}

# wait_tables: wait until every node whose node.yaml asks for eager tables
# reports them built (cohort_paillier_tables_built), TIMEOUT at most.
wait_tables() {
	local i deadline=$((SECONDS + TIMEOUT))
	for i in "${!NAMES[@]}"; do
		grep -q '^paillier_tables: eager' "$WORK/${NAMES[$i]}/node.yaml" || continue
		until [[ $(api "${NAMES[$i]}" /metrics | awk '$1 == "cohort_paillier_tables_built" {print $2}') == 1 ]]; do
			if ((SECONDS > deadline)); then
				echo "${NAMES[$i]}: the key's tables not built after ${TIMEOUT}s" >&2
				exit 1
			fi
			sleep 0.2
		done
	done
}

# load_jobs JOBS: the example JOBS times one after another, then JOBS
# times submitted at once; every total must be the example's.
load_jobs() {
	local n=$1 via=${NAMES[$((${#NAMES[@]} - 1))]} want t0 t1 t2 id ids=() bad
	want=$(for p in "${NAMES[@]}"; do tail -n +2 "$TABLES/data/$p.csv" 2>/dev/null; done | awk -F, '{s += $2} END {print s}')
	# The nodes' memory is at its level once those with paillier_tables:
	# eager have built the key's tables (about 2.4 s of CPU each).
	wait_tables
	sleep "${LOAD_SETTLE:-0}"
	echo "load: before: $(node_state before)"
	t0=$(date +%s%N)
	for ((j = 0; j < n; j++)); do
		id=$(submit "$via")
		settle "$via" "$id"
		ids+=("$id")
	done
	t1=$(date +%s%N)
	echo "load: after $n one after another: $(node_state sequential)"
	mapfile -t -O "${#ids[@]}" ids < <(seq "$n" | xargs -P 32 -I{} bash -c "$(declare -f api submit); $(declare -p NAMES BASE_PORT WORK SPEC); submit $via")
	settle "$via" "${ids[@]:n}"
	t2=$(date +%s%N)
	echo "load: after $n at once: $(node_state concurrent)"
	bad=0
	for id in "${ids[@]}"; do
		[[ $(api "$via" "/v1/jobs/$id/result" | jq -r .sum) == "$want" ]] || bad=$((bad + 1))
	done
	printf 'load: %d jobs one after another %.1f s, at once %.1f s, ratio %.2f; %d of %d totals not %s\n' \
		"$n" "$(((t1 - t0) / 1000000))e-3" "$(((t2 - t1) / 1000000))e-3" \
		"$(awk -v a=$((t2 - t1)) -v b=$((t1 - t0)) 'BEGIN {print a / b}')" "$bad" "${#ids[@]}" "$want"
	((bad == 0)) || exit 1
}

# kill_leader_mid_step LEADER: submit the job through another node, SIGKILL
# LEADER as soon as that node reports the aggregate step running, wait for
# the job's end and check its total against the included parties' rows.
kill_leader_mid_step() {
	local leader=$1 watcher="" i pid id st t0 t1 total want
	for i in "${!NAMES[@]}"; do
		if [[ ${NAMES[$i]} == "$leader" ]]; then pid=${PIDS[$i]}; elif [[ -z $watcher ]]; then watcher=${NAMES[$i]}; fi
	done
	id=$("$COHORT" job submit "$KILLED_SPEC" --format json --config "$WORK/$watcher/node.yaml" | jq -r .id)
	until api "$watcher" "/v1/jobs/$id" 2>/dev/null | jq -e '.steps[]? | select(.phase == "aggregate" and (.done | not))' >/dev/null; do
		sleep 0.005
	done
	kill -KILL "$pid"
	t0=$(date +%s%N)
	log "killed the leader $leader (pid $pid) while job $id aggregates"
	while :; do
		st=$(api "$watcher" "/v1/jobs/$id" 2>/dev/null | jq -r .status || true)
		[[ $st == done || $st == failed ]] && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	"$COHORT" job status "$id" --format json --config "$WORK/$watcher/node.yaml" |
		jq -r '.steps[] | "  \(.phase) attempt \(.attempt): \(.started) .. \(.finished // "-")"' >&2
	printf 'recovery: job %s %s %.2f s after the leader (%s) was killed\n' "$id" "$st" "$(((t1 - t0) / 1000000))e-3" "$leader"
	if [[ $st != done ]]; then api "$watcher" "/v1/jobs/$id" | jq -r .error >&2; exit 1; fi
	total=$("$COHORT" job result "$id" --config "$WORK/$watcher/node.yaml" | jq -r '.sum')
	want=$(for p in $("$COHORT" job result "$id" --config "$WORK/$watcher/node.yaml" | jq -r '.included[]'); do
		tail -n +2 "$TABLES/data/$p.csv"; done | awk -F, '{s += $2} END {print s}')
	if awk -v a="$total" -v b="$want" 'BEGIN {exit !(a == b)}'; then
		echo "recovery: total $total, exact over the included parties" >&2
	else
		echo "recovery: total $total, want $want over the included parties" >&2
		exit 1
	fi
}

COHORT=${COHORT:-}
if [[ -z $COHORT ]]; then
	log "building cohort"
	(cd "$REPO" && go build -o "$WORK/cohort" ./cmd/cohort)
	COHORT=$WORK/cohort
fi

if [[ ${KILL_LEADER:-0} == 1 ]]; then
	# Every member's admissions table: ROWS rows of v = (r mod 100) times
	# a per-member factor and u = 1, and a spec naming every member a
	# party. The first job sums u (it warms the nodes up); the killed one
	# sums v, which the first did not form, so the differencing rule lets
	# it finish over fewer parties.
	TABLES=$WORK/tables SPEC=$WORK/tables/spec.yaml KILLED_SPEC=$WORK/tables/killed.yaml
	mkdir -p "$TABLES/data"
	{
		echo "kind: sum"
		echo "parties:"
		for i in "${!NAMES[@]}"; do
			awk -v n="${ROWS:-1000000}" -v f=$((i + 1)) 'BEGIN {print "ward,v,u"; for (r = 1; r <= n; r++) print "w" r % 7 "," (r % 100) * f ",1"}' \
				>"$TABLES/data/${NAMES[$i]}.csv"
			echo "  - {name: ${NAMES[$i]}, tables: [{name: admissions, path: data/${NAMES[$i]}.csv}]}"
		done
		echo "schema: {admissions: {ward: categorical, v: numeric, u: numeric}}"
	} >"$SPEC"
	cp "$SPEC" "$KILLED_SPEC"
	echo "params: {column: u}" >>"$SPEC"
	echo "params: {column: v}" >>"$KILLED_SPEC"
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
	if [ -n "${NODE_YAML:-}" ]; then
		echo "$NODE_YAML" >>"$WORK/$name/node.yaml"
	fi
	if [[ -n ${NODE_TABLES:-} ]]; then
		printf 'tables:\n  %s\n' "${NODE_TABLES//NAME/$name}" >>"$WORK/$name/node.yaml"
	fi
	if [[ -n ${PROFILES:-} ]]; then
		mkdir -p "$PROFILES"
		echo "pprof: 127.0.0.1:$((BASE_PORT + 200 + i + 1))" >>"$WORK/$name/node.yaml"
	fi
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
	"$COHORT" node run --config "$WORK/$name/node.yaml" --log-level "${LOG_LEVEL:-warn}" \
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
t0=$(date +%s%N)
timeout "$TIMEOUT" "$COHORT" job submit "$SPEC" --wait --config "$WORK/$SUBMITTER/node.yaml"
t1=$(date +%s%N)
if [[ ${PEAK:-0} == 1 ]]; then
	printf 'peak: job %.2f s from submit to result;' "$(((t1 - t0) / 1000000))e-3"
	for i in "${!NAMES[@]}"; do
		printf ' %s %s MiB' "${NAMES[$i]}" "$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PIDS[$i]}/status")"
	done
	echo
fi

# 7. optionally, the recovery figure: kill the leader mid-step.
if [[ ${KILL_LEADER:-0} == 1 ]]; then
	kill_leader_mid_step "${leaders[0]}"
fi

if [[ -n ${LOAD:-} ]]; then
	load_jobs "$LOAD"
fi

# 8. what north disclosed.
echo
"$COHORT" audit --dir "$WORK/north"
log "done; stopping the nodes"
