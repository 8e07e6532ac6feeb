#!/usr/bin/env bash
# compose.sh: build the FROM-scratch image from a locally built static cohort,
# bring the 3-node compose consortium (configs/docker-compose.yml) up with
# podman, run the sum job and a mining job (bicluster) from the host through
# north's HTTP API, print their wall times, check north's web console
# (scripts/console-check.sh), and tear everything down.
#
#   scripts/compose.sh            # needs podman and podman-compose (apt-get install podman podman-compose)
#
# Where a container engine cannot run here, it prints exactly why and exits 0
# (a skip), so CI can call it anywhere. Environment:
#   COHORT_COMPOSE_REQUIRE=1  a missing or broken engine is a failure (exit 1), not a skip
#   KEEP=1                    keep the work dir (node dirs, logs)
#   TIMEOUT                   seconds for the leader and for each job (default 300)
#
# Engine settings for this run go in a private containers.conf (CONTAINERS_CONF):
# runtime runc (Debian's crun 1.8 refuses hosts whose cgroups are in hybrid
# mode), and ulimits of 4096 open files and processes (podman's default of
# 1048576 is above the hard limit of sandboxes without CAP_SYS_RESOURCE).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=${TIMEOUT:-300}
PROJECT=cohort-compose-$$
skip() {
	if [[ ${COHORT_COMPOSE_REQUIRE:-0} == 1 ]]; then
		echo "compose.sh: cannot run: $*" >&2
		exit 1
	fi
	echo "compose.sh: skipped: $*"
	exit 0
}
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman podman-compose)"
command -v podman-compose >/dev/null || skip "podman-compose is not installed (apt-get install podman-compose)"
command -v go >/dev/null || skip "go is not on PATH (needed to build the static cohort binary)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cohort-compose.XXXXXX")
CONF=$WORK/containers.conf
runtime=crun
command -v runc >/dev/null && runtime=runc
cat >"$CONF" <<EOF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "$runtime"
EOF
export CONTAINERS_CONF=$CONF
COMPOSE=(podman-compose -p "$PROJECT" -f "$REPO/configs/docker-compose.yml")
UP=0
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if ((UP)); then
		COHORT_NODES=$WORK/nodes "${COMPOSE[@]}" down >/dev/null 2>&1 || true
		podman network rm -f "${PROJECT}_cohort" >/dev/null 2>&1 || true # podman-compose 1.0 leaves it
	fi
	podman rmi -f "localhost/cohort:scratch-$PROJECT" >/dev/null 2>&1 || true
	if [[ ${KEEP:-0} == 1 ]]; then echo "work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ms() { echo $(($(date +%s%N) / 1000000)); }
START=$(ms)
log() { printf '[%6.1fs] %s\n' "$(($(ms) - START))e-3" "$*" >&2; }

# 1. the static binary (for the image) and a host binary (same build).
log "building a static cohort (CGO_ENABLED=0)"
mkdir -p "$WORK/build"
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$WORK/build/cohort" ./cmd/cohort)
COHORT=$WORK/build/cohort

# 2. the image, FROM scratch: no registry is needed.
IMAGE=cohort:scratch-$PROJECT
log "building $IMAGE with podman"
if ! podman build -q -f "$REPO/configs/Dockerfile.scratch" -t "$IMAGE" "$WORK/build" >"$WORK/build.log" 2>&1; then
	skip "podman build failed: $(tail -n 3 "$WORK/build.log" | tr '\n' ' ')"
fi
# Can a container run at all here? (runtime, cgroups, rlimits, namespaces)
if ! podman run --rm --network none "$IMAGE" version >"$WORK/probe.log" 2>&1; then
	skip "podman cannot start a container here: $(tail -n 2 "$WORK/probe.log" | tr '\n' ' ')"
fi

# 3. node dirs: init, consortium, keys (on the host, with the same binary).
log "initialising north, south, west and dealing a 2048-bit key"
COHORT=$COHORT "$REPO/configs/compose-init.sh" "$WORK/nodes" >/dev/null

# 4. up.
log "podman-compose up"
UP=1
if ! COHORT_NODES=$WORK/nodes COHORT_IMAGE=$IMAGE "${COMPOSE[@]}" up -d >"$WORK/up.log" 2>&1; then
	cat "$WORK/up.log" >&2
	skip "podman-compose up failed (log above)"
fi
T_UP=$(ms)
export COHORT_TOKEN
COHORT_TOKEN=$(cat "$WORK/nodes/north/api.token")
API=127.0.0.1:7480
deadline=$((SECONDS + TIMEOUT))
until "$COHORT" node status --api "$API" --format json 2>/dev/null | grep -q '"leader": "[a-z]'; do
	if ((SECONDS > deadline)); then
		"${COMPOSE[@]}" logs >&2 2>&1 || true
		echo "compose.sh: no leader after ${TIMEOUT}s" >&2
		exit 1
	fi
	sleep 0.2
done
log "leader elected $(($(ms) - T_UP)) ms after up: $("$COHORT" node status --api "$API" --format json | sed -n 's/.*"leader": "\([^"]*\)".*/\1/p')"

# 5. the jobs, submitted from the host.
run_job() { # NAME SPEC CHECK
	local t0 out
	t0=$(ms)
	if ! out=$(timeout "$TIMEOUT" "$COHORT" job submit "$2" --wait --api "$API" --format json 2>"$WORK/$1.err"); then
		cat "$WORK/$1.err" >&2
		echo "compose.sh: $1 failed" >&2
		exit 1
	fi
	local wall=$(($(ms) - t0))
	printf '%s\n' "$out" >"$WORK/$1.json"
	if ! grep -q "$3" <<<"$out"; then
		echo "compose.sh: $1: result lacks $3:" >&2
		echo "$out" >&2
		exit 1
	fi
	printf '%s\t%d.%03d s\n' "$1" $((wall / 1000)) $((wall % 1000))
}
echo "job	wall time (submit to result, 3 containers, podman $(podman --version | cut -d' ' -f3), load $(cut -d' ' -f1 /proc/loadavg))"
run_job sum "$REPO/examples/sum/spec.yaml" '"sum": 79.75'
run_job bicluster "$REPO/examples/bicluster/spec.yaml" '"biclusters"'

# 6. north's web console, served from its container on the same listener.
job=$("$COHORT" job list --api "$API" --format json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
[[ -n $job ]] || { echo "compose.sh: north lists no job" >&2; exit 1; }
"$REPO/scripts/console-check.sh" "$API" "$WORK/nodes/north/api.token" "$job"
log "done; tearing down"
