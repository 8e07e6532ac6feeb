#!/usr/bin/env bash
# keygen-figures.sh: the figures of docs/keygen.md. `cohort sim` runs the
# keygen job (dealerless 2048-bit threshold key) on N real nodes in one
# process over libp2p on loopback, RUNS times for each N, and prints per
# run the job's wall time (the runtime's generate + install phases), the
# candidate pairs tried and the bytes each party sent, then the medians.
# The load average is printed before each run: the figures depend on it.
#
#   scripts/keygen-figures.sh [RUNS] [PARTIES...]     # default 5 runs, 3 and 5 parties
set -euo pipefail
RUNS=${1:-5}
shift || true
PARTIES=("${@:-3 5}")
[ $# -eq 0 ] && PARTIES=(3 5)
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/cohort-keygen-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cohort" ./cmd/cohort
names=(ann bob cat dan eve fay gus hal)
for n in "${PARTIES[@]}"; do
  spec="$work/keygen-$n.yaml"
  { echo "kind: keygen"; echo "parties:"
    for ((i = 0; i < n; i++)); do echo "  - name: ${names[$i]}"; done
    echo "params: {bits: 2048}"; } > "$spec"
  : > "$work/times-$n"
  for ((r = 1; r <= RUNS; r++)); do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    "$work/cohort" sim "$spec" --out "$work/out-$n-$r" --timeout 30m > /dev/null 2> "$work/progress"
    res="$work/out-$n-$r/result.json"
    # Wall time from submission to the end of the job (cluster start-up and
    # the dealt key sim prepares for other kinds are not counted); reruns
    # counts step attempts after the first (a leader change re-runs the
    # running step) and steps the search steps.
    secs=$(awk '/submitted/ {s = substr($2, 1, length($2) - 2)} /finished/ {f = substr($2, 1, length($2) - 2)} END {print f - s}' FS='[][ ]+' "$work/progress")
    reruns=$(grep -c 'started (attempt [2-9]' "$work/progress" || true)
    echo "$secs" >> "$work/times-$n"
    printf 'parties=%d run=%d load=[%s] seconds=%.1f reruns=%s steps=%s candidates=%s bytes_per_party=%s last_attempt_phases=%s\n' "$n" "$r" "$load" "$secs" "$reruns" "$(jq .search_steps "$res")" \
      "$(jq .candidates "$res")" "$(jq -c '[.bytes[]] | add / length | floor' "$res")" "$(jq -c .generation_timing "$res")"
  done
  printf 'parties=%d median_seconds=%s over %d runs\n' "$n" "$(sort -g "$work/times-$n" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')" "$RUNS"
done
