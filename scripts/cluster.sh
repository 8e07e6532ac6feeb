#!/usr/bin/env bash
# cluster.sh: run one job spec on N Cohort node processes, each in its own
# network namespace, over a shaped network; collect result.json and every
# ledger, as `cohort sim --out` does; tear everything down.
#
#   scripts/cluster.sh [-n N] [--profile lan|wan|lossy] SPEC OUTDIR
#   scripts/cluster.sh --check        # can this machine run it? (exit 0 yes, 1 no, with why)
#
# Topology: a hub namespace holds a bridge; each node's namespace has one veth
# (eth0, 10.250.0.(10+i)/24) to it. The address range exists only inside these
# namespaces: the host's own namespace is not touched. Nodes talk libp2p over
# QUIC (UDP) on port 7400.
#
# Profiles (applied on each node's egress, so a packet is shaped once on its way):
#   lan    no shaping
#   wan    10 Mbit/s (tc tbf) and 50 ms one-way delay (100 ms round trip)
#   lossy  1% datagram loss
# Rate: tc's tbf qdisc. Delay and loss: netem where the kernel has it; else
# cohort-netshape (internal/netshape), a UDP relay in each node's namespace in
# front of its QUIC listener that delays and drops datagrams (every datagram of
# a connection crosses exactly one relay, so the one-way delay and loss are as
# with netem on each host). OUTDIR/run.json says which was used.
#
# OUTDIR (new or empty) receives result.json (the job's result, as `cohort sim`
# writes it), audit/PARTY.jsonl (every node's ledger) and run.json (nodes,
# profile, shaping, wall time from submit to result, bytes each node put on
# the wire during the job).
#
# The spec's parties are the first nodes; with -n larger than the party count
# the extra members (org4, org5, ...) join the consortium and hold no table.
# Table paths in the spec are relative to the spec's directory, which is every
# node's tables_dir.
#
# Environment:
#   COHORT, NETSHAPE  built binaries (default: built from this checkout)
#   KEYS_CACHE        a directory to keep dealt threshold and lattice keys in, per member set,
#                     and reuse them (dealing a 2048-bit key takes seconds to a minute)
#   TIMEOUT           seconds for the leader and for the job each (default 300)
#   KEEP=1            keep the work dir (data dirs, node logs)
#   TIMING            node.Timing fields for every node.yaml, as YAML flow
#                     mapping entries ("heartbeat_ms: 5000, send_ms: 600000"):
#                     long vectors on the wan profile need them (docs/probe.md)
#   PPROF=SECONDS     profile every node's CPU for SECONDS from submission
#                     (node.yaml pprof on each namespace's loopback; curl):
#                     OUTDIR/cpu/PARTY.prof, for go tool pprof with the binary
#   TRANSPORT=tcp     nodes listen on and list TCP port 7400 beside QUIC and dial
#                     TCP first (node.yaml prefer_tcp); default quic (QUIC only).
#                     Not with a cohort-netshape relay, which relays UDP only
#   SETTLE=1          before submitting, wait until every node's randomiser and
#                     lattice pools are full (a fresh node builds its key's tables
#                     and fills them as it starts, on the cores the job would use)
#   CONSOLE=0         skip the web console check: by default the first node
#                     also serves its HTTP listener on its address, port 7480,
#                     and scripts/console-check.sh (curl) drives its console
#                     from inside its namespace once the job is done
#
# Needs root, iproute2 (ip, tc) and go (unless COHORT and NETSHAPE are set).
# A trap on EXIT, INT and TERM stops every process and deletes every namespace
# (which deletes the veths and the bridge), whatever happens.
set -euo pipefail

usage() {
	echo "usage: $0 [-n N] [--profile lan|wan|lossy] SPEC OUTDIR   |   $0 --check" >&2
	exit 2
}

# why_not prints why this machine cannot run the script, or nothing.
why_not() {
	if [[ $(id -u) != 0 ]]; then
		echo "not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
		return
	fi
	for c in ip tc; do
		command -v "$c" >/dev/null || { echo "$c not found (apt-get install iproute2)"; return; }
	done
	local ns=cohort-check-$$
	if ! ip netns add "$ns" 2>/dev/null; then
		echo "'ip netns add' failed: this sandbox does not allow network namespaces"
		return
	fi
	if ! ip -n "$ns" link add v0 type veth peer name v1 2>/dev/null; then
		ip netns del "$ns"
		echo "cannot create veth pairs in a namespace"
		return
	fi
	if ! ip netns exec "$ns" tc qdisc add dev v0 root tbf rate 10mbit burst 32kbit latency 400ms 2>/dev/null; then
		ip netns del "$ns"
		echo "tc tbf is unavailable (kernel without sch_tbf)"
		return
	fi
	ip netns del "$ns"
}

N=""
PROFILE=lan
ARGS=()
while (($#)); do
	case $1 in
	--check)
		reason=$(why_not)
		if [[ -n $reason ]]; then
			echo "cluster.sh cannot run here: $reason"
			exit 1
		fi
		echo "cluster.sh can run here"
		exit 0
		;;
	-n) N=${2:-}; shift 2 || usage ;;
	--profile) PROFILE=${2:-}; shift 2 || usage ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) ARGS+=("$1"); shift ;;
	esac
done
((${#ARGS[@]} == 2)) || usage
SPEC=$(realpath "${ARGS[0]}")
OUT=${ARGS[1]}
case $PROFILE in lan | wan | lossy) ;; *) echo "unknown profile $PROFILE (lan, wan or lossy)" >&2; exit 2 ;; esac
[[ -f $SPEC ]] || { echo "no spec at $SPEC" >&2; exit 2; }
if [[ -e $OUT ]] && [[ -n $(ls -A "$OUT") ]]; then
	echo "$OUT is not empty; choose a new OUTDIR" >&2
	exit 2
fi
reason=$(why_not)
[[ -z $reason ]] || { echo "cluster.sh cannot run here: $reason" >&2; exit 1; }

REPO=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=${TIMEOUT:-300}

# The spec's party names: in block style the `- name: X` items directly under
# `parties:` (the shallowest indentation; deeper ones are tables), in flow style
# (`parties: [{name: X, tables: [...]}, ...]`) the names at brace depth one.
mapfile -t PARTIES < <(awk '
	/^parties:/ { inp = 1; rest = $0; sub(/^parties:[ ]*/, "", rest); if (rest ~ /^\[/) { flow = rest; fl = 1 }; next }
	inp && /^[^ #-]/ { inp = 0 }
	inp && fl { flow = flow " " $0; next }
	inp && /^[ ]*-[ ]*name:/ {
		match($0, /^[ ]*-/); ind = RLENGTH
		if (min == 0 || ind < min) { min = ind; n = 0 }
		if (ind == min) { s = $0; sub(/^[ ]*-[ ]*name:[ ]*/, "", s); sub(/[ ,#].*/, "", s); names[++n] = s }
	}
	END {
		if (fl) {
			depth = 0
			for (i = 1; i <= length(flow); i++) {
				c = substr(flow, i, 1)
				if (c == "{") depth++
				else if (c == "}") depth--
				else if (depth == 1 && substr(flow, i, 5) == "name:" && (i == 1 || substr(flow, i - 1, 1) ~ /[ {,]/)) {
					s = substr(flow, i + 5); sub(/^[ ]*/, "", s); match(s, /^[A-Za-z0-9._-]+/); print substr(s, 1, RLENGTH)
				}
			}
		} else for (i = 1; i <= n; i++) print names[i]
	}' "$SPEC")
((${#PARTIES[@]} > 0)) || { echo "no parties found in $SPEC" >&2; exit 2; }
N=${N:-${#PARTIES[@]}}
if ! [[ $N =~ ^[0-9]+$ ]] || ((N < ${#PARTIES[@]})) || ((N > 200)); then
	echo "-n $N: want at least the spec's ${#PARTIES[@]} parties (${PARTIES[*]}) and at most 200" >&2
	exit 2
fi
NAMES=("${PARTIES[@]}")
k=${#PARTIES[@]}
while ((${#NAMES[@]} < N)); do # orgK, skipping names the spec already uses
	k=$((k + 1))
	printf '%s\n' "${NAMES[@]}" | grep -qx "org$k" || NAMES+=("org$k")
done

RUN=$(printf '%04x%02x' $((RANDOM)) $(($$ % 256)))
HUB=cohort-$RUN-hub
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-cluster.XXXXXX")
NSS=()
PIDS=()

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
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

START_MS=$(($(date +%s%N) / 1000000))
ms() { echo $(($(date +%s%N) / 1000000)); }
log() { printf '[%6.1fs] %s\n' "$(($(ms) - START_MS))e-3" "$*" >&2; }

COHORT=${COHORT:-}
NETSHAPE=${NETSHAPE:-}
if [[ -z $COHORT || -z $NETSHAPE ]]; then
	log "building cohort and cohort-netshape"
	(cd "$REPO" && go build -o "$WORK/cohort" ./cmd/cohort && go build -o "$WORK/cohort-netshape" ./cmd/cohort-netshape)
	COHORT=${COHORT:-$WORK/cohort}
	NETSHAPE=${NETSHAPE:-$WORK/cohort-netshape}
fi

# 1. the network: a hub namespace with a bridge, one namespace per node.
ip netns add "$HUB"
NSS+=("$HUB")
ip -n "$HUB" link add br0 type bridge
ip -n "$HUB" link set br0 up
SHAPING=none
DELAY_MS=0 LOSS=0 RATE=""
case $PROFILE in
wan) DELAY_MS=50 RATE=10mbit ;;
lossy) LOSS=0.01 ;;
esac
if [[ $DELAY_MS != 0 || $LOSS != 0 ]]; then
	if ip -n "$HUB" link add probe0 type dummy 2>/dev/null &&
		ip netns exec "$HUB" tc qdisc add dev probe0 root netem delay 1ms 2>/dev/null; then
		SHAPING=netem
	else
		SHAPING=cohort-netshape
	fi
	ip -n "$HUB" link del probe0 2>/dev/null || true
fi
[[ -n $RATE && $SHAPING == none ]] && SHAPING=tbf
[[ -n $RATE && $SHAPING != tbf ]] && SHAPING="tbf+$SHAPING"

TRANSPORT=${TRANSPORT:-quic}
case $TRANSPORT in
quic) WIRE="libp2p QUIC over UDP" ;;
tcp) WIRE="libp2p over TCP (QUIC listed too)" ;;
*) echo "TRANSPORT=$TRANSPORT: want quic or tcp" >&2; exit 2 ;;
esac
if [[ $TRANSPORT == tcp && $SHAPING == *cohort-netshape* ]]; then
	echo "TRANSPORT=tcp: the cohort-netshape relay this kernel needs for profile $PROFILE relays UDP only" >&2
	exit 2
fi

addr() { echo "10.250.0.$((10 + $1))"; }
for i in "${!NAMES[@]}"; do
	ns=cohort-$RUN-$i
	ip netns add "$ns"
	NSS+=("$ns")
	ip -n "$HUB" link add "p$i" type veth peer name eth0 netns "$ns"
	ip -n "$HUB" link set "p$i" master br0 up
	ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	dev_qdisc_parent="root"
	if [[ $SHAPING == *netem* ]]; then
		netem_args=()
		[[ $DELAY_MS != 0 ]] && netem_args+=(delay "${DELAY_MS}ms")
		[[ $LOSS != 0 ]] && netem_args+=(loss "$(awk -v l="$LOSS" 'BEGIN { print l * 100 }')%")
		ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: netem "${netem_args[@]}"
		dev_qdisc_parent="parent 1:"
	fi
	if [[ -n $RATE ]]; then
		# burst: 32 KiB lets a 10 Mbit/s link send full-size bursts; latency
		# bounds the queue (400 ms at 10 Mbit/s is 500 KB).
		# shellcheck disable=SC2086
		ip netns exec "$ns" tc qdisc add dev eth0 $dev_qdisc_parent handle 2: tbf rate "$RATE" burst 32kb latency 400ms
	fi
done
log "network: ${N} namespaces on a bridge in $HUB, profile $PROFILE (shaping: $SHAPING)"

# 2. node init on each "machine". With the relay, the node listens on a
#    loopback port of its own namespace and the relay on its address.
MEMBERS=()
for i in "${!NAMES[@]}"; do
	name=${NAMES[$i]}
	if [[ $SHAPING == *cohort-netshape* ]]; then
		listen=/ip4/127.0.0.1/udp/$((7500 + i))/quic-v1
	else
		listen=/ip4/$(addr "$i")/udp/7400/quic-v1
	fi
	if [[ $TRANSPORT == tcp ]]; then listen="$listen,/ip4/$(addr "$i")/tcp/7400"; fi
	MEMBERS+=("$("$COHORT" node init --name "$name" --dir "$WORK/$name" --listen "$listen" --format json |
		sed -n 's/.*"peer_id": *"\([^"]*\)".*/\1/p')")
	sed -i "s#^tables_dir:.*#tables_dir: $(dirname "$SPEC")#" "$WORK/$name/node.yaml"
	if [[ -n ${TIMING:-} ]]; then echo "timing: {$TIMING}" >>"$WORK/$name/node.yaml"; fi
	if [[ $TRANSPORT == tcp ]]; then echo "prefer_tcp: true" >>"$WORK/$name/node.yaml"; fi
	if [[ -n ${PPROF:-} ]]; then echo "pprof: 127.0.0.1:6060" >>"$WORK/$name/node.yaml"; fi
done
# The first node also serves its HTTP API and web console, on its address.
if [[ ${CONSOLE:-1} == 1 ]] && ! command -v curl >/dev/null; then
	log "no curl: the web console check is skipped (apt-get install curl)"
	CONSOLE=0
fi
if [[ ${CONSOLE:-1} == 1 ]]; then echo "http: $(addr 0):7480" >>"$WORK/${NAMES[0]}/node.yaml"; fi
{
	echo "members:"
	for i in "${!NAMES[@]}"; do
		printf '  - name: %s\n    peer_id: %s\n    addrs:\n      - /ip4/%s/udp/7400/quic-v1\n' \
			"${NAMES[$i]}" "${MEMBERS[$i]}" "$(addr "$i")"
		if [[ $TRANSPORT == tcp ]]; then printf '      - /ip4/%s/tcp/7400\n' "$(addr "$i")"; fi
	done
} >"$WORK/consortium.yaml"
for name in "${NAMES[@]}"; do cp "$WORK/consortium.yaml" "$WORK/$name/consortium.yaml"; done

# 3. the threshold and lattice keys (trusted dealer), or cached ones for these members.
#    Dealt for every member when the parties alone reach its threshold (an
#    honest majority of the members, floor((N-1)/2)+1); otherwise (many extra
#    members) for the spec's parties only, since the extra members hold no
#    table and take no part in the job's decryption. run.json says which.
KEY_MEMBERS=("${NAMES[@]}")
if (((N - 1) / 2 + 1 > ${#PARTIES[@]})); then KEY_MEMBERS=("${PARTIES[@]}"); fi
members_csv=$(IFS=,; echo "${KEY_MEMBERS[*]}")
keydir=$WORK/keys
if [[ -n ${KEYS_CACHE:-} ]]; then
	keydir=$KEYS_CACHE/$members_csv
fi
if [[ ! -e $keydir/${KEY_MEMBERS[0]}/keys/threshold.share ]]; then
	log "dealing a 2048-bit threshold key for $members_csv"
	mkdir -p "$keydir"
	"$COHORT" keys deal --members "$members_csv" --bits 2048 --out "$keydir" >&2
fi
# ... and the lattice key (params.backend lattice or auto; a second or less),
# into the same key directories; a cache from before it had none gains one.
if [[ ! -e $keydir/${KEY_MEMBERS[0]}/keys/lattice.share ]]; then
	log "dealing a lattice key for $members_csv"
	"$COHORT" keys deal --scheme bgv --members "$members_csv" --out "$keydir" >&2
fi
for name in "${KEY_MEMBERS[@]}"; do cp -r "$keydir/$name/keys" "$WORK/$name/"; done

# 4. start the relays (if any) and the nodes, each in its namespace.
for i in "${!NAMES[@]}"; do
	ns=cohort-$RUN-$i
	if [[ $SHAPING == *cohort-netshape* ]]; then
		ip netns exec "$ns" "$NETSHAPE" --listen "$(addr "$i"):7400" --to "127.0.0.1:$((7500 + i))" \
			--delay "${DELAY_MS}ms" --loss "$LOSS" --seed "$((i + 1))" >"$WORK/${NAMES[$i]}.netshape.log" 2>&1 &
		PIDS+=($!)
	fi
	ip netns exec "$ns" "$COHORT" node run --config "$WORK/${NAMES[$i]}/node.yaml" --log-level warn \
		>"$WORK/${NAMES[$i]}.log" 2>&1 &
	PIDS+=($!)
done
log "started ${N} nodes; logs in $WORK/NAME.log"

# 5. wait until every node names the same leader (over its control socket).
deadline=$((SECONDS + TIMEOUT))
t_leader=$(ms)
while :; do
	leaders=()
	for name in "${NAMES[@]}"; do
		leaders+=("$("$COHORT" node status --config "$WORK/$name/node.yaml" --format json 2>/dev/null |
			sed -n 's/.*"leader": *"\([^"]*\)".*/\1/p' || true)")
	done
	if [[ -n ${leaders[0]} ]] && [[ $(printf '%s\n' "${leaders[@]}" | sort -u | wc -l) == 1 ]]; then
		break
	fi
	for pid in "${PIDS[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "a process exited early; logs:" >&2
			tail -n 20 "$WORK"/*.log >&2
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
ELECT_MS=$(($(ms) - t_leader))
log "leader: ${leaders[0]} (all ${N} agree after $((ELECT_MS))ms)"

# 5b. with SETTLE=1, wait until every node has built its key's tables and
#     filled its pools (a fresh node does that as it starts, on the cores the
#     job would use), so that the job is timed as on nodes that idled before it.
pools_full() { # node.yaml: every pool its status lists has ready == size
	local st
	st=$("$COHORT" node status --config "$1" --format json 2>/dev/null | tr -d ' \n') || return 1
	for pool in randomizers lattice_zeros; do
		local p size ready
		p=$(grep -o "\"$pool\":{[^}]*}" <<<"$st") || continue
		size=$(sed -n 's/.*"size":\([0-9]*\).*/\1/p' <<<"$p")
		ready=$(sed -n 's/.*"ready":\([0-9]*\).*/\1/p' <<<"$p")
		[[ -n $size && $ready == "$size" ]] || return 1
	done
}
if [[ ${SETTLE:-0} == 1 ]]; then
	t_settle=$(ms)
	for name in "${NAMES[@]}"; do
		until pools_full "$WORK/$name/node.yaml"; do
			if ((SECONDS > deadline)); then
				echo "SETTLE: $name's pools not full after ${TIMEOUT}s" >&2
				exit 1
			fi
			sleep 0.5
		done
	done
	log "pools full on every node after $(($(ms) - t_settle))ms"
fi

txbytes() { ip -n "cohort-$RUN-$1" -s -j link show eth0 | sed -n 's/.*"tx":{"bytes":\([0-9]*\).*/\1/p'; }
declare -A TX0
for i in "${!NAMES[@]}"; do TX0[$i]=$(txbytes "$i"); done

# 6. submit through the last node and wait for the result.
SUBMITTER=${NAMES[$((N - 1))]}
CFG=$WORK/$SUBMITTER/node.yaml
log "submitting $SPEC via $SUBMITTER"
t0=$(ms)
id=$("$COHORT" job submit "$SPEC" --config "$CFG" --format json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
[[ -n $id ]] || { echo "submit returned no job id" >&2; exit 1; }
PROFS=()
if [[ -n ${PPROF:-} ]]; then
	mkdir -p "$OUT/cpu"
	for i in "${!NAMES[@]}"; do
		ip netns exec "cohort-$RUN-$i" curl -sf -m "$((PPROF + 60))" -o "$OUT/cpu/${NAMES[$i]}.prof" \
			"http://127.0.0.1:6060/debug/pprof/profile?seconds=$PPROF" &
		PROFS+=($!)
	done
fi
status=""
while :; do
	status=$("$COHORT" job status "$id" --config "$CFG" --format json | sed -n 's/^  "status": *"\([^"]*\)".*/\1/p')
	[[ $status == done || $status == failed ]] && break
	if (($(ms) - t0 > TIMEOUT * 1000)); then
		echo "job $id not finished after ${TIMEOUT}s" >&2
		exit 1
	fi
	sleep 0.05
done
WALL_MS=$(($(ms) - t0))
for pid in "${PROFS[@]}"; do wait "$pid" || log "a CPU profile was not written"; done
if [[ $status != done ]]; then
	"$COHORT" job status "$id" --config "$CFG" >&2 || true
	exit 1
fi
mkdir -p "$OUT/audit"
"$COHORT" job result "$id" --config "$CFG" >"$OUT/result.json"
tx_json=""
for i in "${!NAMES[@]}"; do
	tx_json+="$( ((i > 0)) && echo ", ")\"${NAMES[$i]}\": $(($(txbytes "$i") - TX0[$i]))"
done
for name in "${NAMES[@]}"; do cp "$WORK/$name/audit.jsonl" "$OUT/audit/$name.jsonl"; done
if [[ ${CONSOLE:-1} == 1 ]]; then
	ip netns exec "cohort-$RUN-0" "$(dirname "$0")/console-check.sh" "$(addr 0):7480" "$WORK/${NAMES[0]}/api.token" "$id"
fi
cat >"$OUT/run.json" <<EOF
{
  "job": "$id",
  "spec": "$SPEC",
  "nodes": $N,
  "profile": "$PROFILE",
  "shaping": "$SHAPING",
  "delay_ms": $DELAY_MS,
  "loss": $LOSS,
  "rate": "${RATE:-none}",
  "transport": "$WIRE",
  "key_members": "$members_csv",
  "election_ms": $ELECT_MS,
  "timing": "${TIMING:-default}",
  "settled": $([[ ${SETTLE:-0} == 1 ]] && echo true || echo false),
  "wall_seconds": $(awk -v m="$WALL_MS" 'BEGIN { printf "%.3f", m / 1000 }'),
  "wire_tx_bytes": {$tx_json},
  "load": "$(cut -d' ' -f1-3 /proc/loadavg)"
}
EOF
log "job $id done in $(awk -v m="$WALL_MS" 'BEGIN { printf "%.2f", m / 1000 }')s; wrote $OUT/result.json, $OUT/audit/ and $OUT/run.json"
