#!/usr/bin/env bash
# clickhouse-figure.sh: the ClickHouse figure of docs/sources.md. Two
# clickhouse-server processes (plain processes with their own config in the
# work dir, not the system service) form a cluster of two shards; each of
# three parties' tables is a Distributed table over both, ROWS rows in all
# (ROWS/2 per shard). `cohort sim` runs the sum (KIND=sum) or quantile
# (KIND=quantile) job over them (three nodes in one process), pushing each
# party's work to the cluster; /usr/bin/time -v reports wall time and peak
# resident memory of the simulation. Then clickhouse-client runs the same
# queries alone (each party's sum, or its count at one threshold), timed the
# same way.
#
#   [KIND=quantile] scripts/clickhouse-figure.sh [ROWS] [BINARY]   # default 10000000, built from this tree
#
# NODES=processes runs the job over three real node processes instead
# (scripts/local-cluster.sh with SPEC and PEAK=1: the job's wall time and
# each node's peak resident memory). SIM_FLAGS are passed to `cohort sim`
# (e.g. "--timeout 40m"); TIMEOUT (seconds) bounds the job over processes.
set -euo pipefail
ROWS=${1:-10000000}
KIND=${KIND:-sum}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/cohort-chfig-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cohort=${2:-}
if [ -z "$cohort" ]; then go build -o "$work/cohort" ./cmd/cohort; cohort="$work/cohort"; fi
server=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p0=$(port); p1=$(port)
shards="<shard><replica><host>127.0.0.1</host><port>$p0</port><user>admin</user><password>admin</password></replica></shard><shard><replica><host>127.0.0.1</host><port>$p1</port><user>admin</user><password>admin</password></replica></shard>"
for i in 0 1; do
  d="$work/ch$i"; mkdir -p "$d"
  tcp=$([ $i = 0 ] && echo "$p0" || echo "$p1")
  cat > "$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/err.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>$tcp</tcp_port><http_port>$(port)</http_port><interserver_http_port>$(port)</interserver_http_port>
  <path>$d/data/</path><tmp_path>$d/tmp/</tmp_path><user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <remote_servers><cohort>$shards</cohort></remote_servers>
</yandex>
XML
  cat > "$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default></default><readonly><readonly>1</readonly></readonly></profiles>
  <users>
    <admin><password>admin</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></admin>
    <cohort><password>cohort</password><networks><ip>127.0.0.1</ip></networks><profile>readonly</profile><quota>default</quota></cohort>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
  (cd "$d" && exec "$server" --config-file="$d/config.xml" >"$d/stdout" 2>&1) &
  pids+=($!)
done
ch() { clickhouse-client --port "$1" --user admin --password admin -q "$2"; }
for port in $p0 $p1; do
  until ch "$port" "SELECT 1" >/dev/null 2>&1; do sleep 0.2; done
done
half=$((ROWS / 2))
for p in north south west; do
  for port in $p0 $p1; do
    ch "$port" "CREATE TABLE ${p}_local (ward String, v Float64) ENGINE = MergeTree ORDER BY tuple()"
    ch "$port" "CREATE TABLE $p AS ${p}_local ENGINE = Distributed(cohort, default, ${p}_local, rand())"
  done
  ch "$p0" "INSERT INTO ${p}_local SELECT ['cardio','neuro','ortho','paeds','onco'][number % 5 + 1], (number % 1000) / 4 FROM system.numbers LIMIT $half"
  ch "$p1" "INSERT INTO ${p}_local SELECT ['cardio','neuro','ortho','paeds','onco'][(number + $half) % 5 + 1], ((number + $half) % 1000) / 4 FROM system.numbers LIMIT $((ROWS - half))"
done
export COHORT_FIGURES_CH="clickhouse://cohort:cohort@127.0.0.1:$p0/default"
{
  echo "kind: $KIND"; echo "parties:"
  for p in north south west; do
    echo "  - name: $p"; echo "    tables: [{name: admissions, source: {clickhouse_env: COHORT_FIGURES_CH, table: $p}}]"
  done
  echo "schema: {admissions: {ward: categorical, v: numeric}}"
  if [ "$KIND" = quantile ]; then echo "params: {column: v, quantiles: [0.5]}"; else echo "params: {column: v}"; fi
} > "$work/spec.yaml"
echo "rows: $ROWS per party (Distributed over 2 shards), 3 parties; cores: $(nproc); uptime before: $(uptime)"
if [ "${NODES:-sim}" = processes ]; then
  # Real nodes read a database source only from their own catalogue: each
  # maps admissions to its Distributed table; the spec names it only.
  sed -i 's#source: {clickhouse_env: COHORT_FIGURES_CH, table: [a-z]*}#path: admissions#' "$work/spec.yaml"
  NODE_TABLES='admissions: {clickhouse_env: COHORT_FIGURES_CH, table: NAME}' COHORT=$cohort SPEC=$work/spec.yaml PEAK=1 TIMEOUT=${TIMEOUT:-3600} scripts/local-cluster.sh 3 2>"$work/cluster.log" |
    grep -E '^peak:|"(sum|value|rounds)"' || { tail -n 40 "$work/cluster.log" >&2; exit 1; }
  echo "uptime after: $(uptime)"
else
  # shellcheck disable=SC2086 # SIM_FLAGS is a list of flags
  /usr/bin/time -v -o "$work/time" "$cohort" sim --format json ${SIM_FLAGS:-} "$work/spec.yaml" --out "$work/out" > "$work/result.json"
  echo "uptime after: $(uptime)"
  echo "cohort sim:"; grep -E 'Elapsed|Maximum resident' "$work/time"
  grep -oE '"(sum|value|rounds)": *[0-9.e+-]*' "$work/result.json"
fi
if [ "$KIND" = quantile ]; then
  q="SELECT count(), countIf(v <= 124.75) FROM"
else
  q="SELECT count(), sum(v) FROM"
fi
for p in north south west; do
  /usr/bin/time -v -o "$work/time.$p" clickhouse-client --port "$p0" --user cohort --password cohort -q "$q $p"
done
echo "clickhouse-client alone ($q <party>, per party):"
grep -hE 'Elapsed|Maximum resident' "$work"/time.north "$work"/time.south "$work"/time.west
