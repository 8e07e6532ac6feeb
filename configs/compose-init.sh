#!/bin/sh
# compose-init.sh NODES_DIR: set up the docker-compose consortium's node dirs
# on the host, with the host's cohort binary ($COHORT, default cohort on PATH):
# `node init` for north, south and west, one consortium.yaml naming each by its
# service name on the compose network, every node's tables mapped to the
# bundled examples (mounted at /examples), north's HTTP API on port 7480, and a
# trusted-dealer 2048-bit threshold key (DEAL=0 skips it). On a real deployment
# each organisation runs `node init` on its own machine and a trusted party
# deals the keys; here one script does it all, which is fine for a demo on one
# host only.
set -eu
NODES=${1:?usage: compose-init.sh NODES_DIR}
COHORT=${COHORT:-cohort}
# The members, also the service names of configs/docker-compose.yml: they find
# each other by those names on the compose network.
MEMBERS="north south west"

if [ -e "$NODES/north/identity.key" ]; then
	echo "$NODES is already initialised; delete it to start afresh" >&2
	exit 1
fi
mkdir -p "$NODES"
CONS=$NODES/consortium.yaml
echo "members:" >"$CONS"
for n in $MEMBERS; do
	"$COHORT" node init --name "$n" --dir "$NODES/$n" \
		--listen /ip4/0.0.0.0/tcp/7400,/ip4/0.0.0.0/udp/7400/quic-v1 --format json >"$NODES/$n.json"
	id=$(sed -n 's/.*"peer_id": *"\([^"]*\)".*/\1/p' "$NODES/$n.json")
	printf '  - name: %s\n    peer_id: %s\n    addrs:\n      - /dns4/%s/tcp/7400\n      - /dns4/%s/udp/7400/quic-v1\n' \
		"$n" "$id" "$n" "$n" >>"$CONS"
	# Tables: the examples mounted read-only at /examples, each node reading
	# only its own rows of each example's logical table.
	sed -i "s#^tables_dir:.*#tables_dir: /examples#" "$NODES/$n/node.yaml"
	cat >>"$NODES/$n/node.yaml" <<EOT
tables:
  admissions: {path: sum/data/$n.csv}
  stays: {path: quantile/data/$n.csv}
  markers: {path: bicluster/data/$n.csv}
EOT
	if [ "$n" = north ]; then echo "http: 0.0.0.0:7480" >>"$NODES/$n/node.yaml"; fi
	# The data dir as the container sees it: node.yaml's data_dir is "."
	# (relative to /data/node.yaml), so nothing host-specific is written.
done
for n in $MEMBERS; do cp "$CONS" "$NODES/$n/consortium.yaml"; done
if [ "${DEAL:-1}" != 0 ]; then
	# Trusted dealer: writes NODES/NAME/keys/threshold.{pub,share}.
	"$COHORT" keys deal --members north,south,west --bits 2048 --out "$NODES" >&2
fi
# The image runs as the unprivileged user 10001.
chown -R 10001:10001 "$NODES"/north "$NODES"/south "$NODES"/west 2>/dev/null || true
cat "$CONS"
