#!/bin/sh
# compose-init.sh: one-shot set-up of the docker-compose consortium, run by the
# `init` service of configs/docker-compose.yml with every node's volume mounted
# at /nodes/NAME. On a real deployment each organisation runs `node init` on its
# own machine and a trusted party deals the keys; here one container does all of
# it, which is fine for a demo on one host only.
set -eu
NAMES=${NAMES:-"north south west"}
TABLES=${TABLES:-/tables}

if [ -e "/nodes/$(echo "$NAMES" | cut -d' ' -f1)/identity.key" ]; then
	echo "already initialised; 'docker compose down -v' starts afresh"
	exit 0
fi

CONS=/tmp/consortium.yaml
echo "members:" >"$CONS"
for n in $NAMES; do
	cohort node init --name "$n" --dir "/nodes/$n" \
		--listen /ip4/0.0.0.0/tcp/7400,/ip4/0.0.0.0/udp/7400/quic-v1 >"/tmp/$n.txt"
	id=$(sed -n 's/^peer id: //p' "/tmp/$n.txt")
	# Members reach each other by compose service name on the bridge network.
	printf '  - name: %s\n    peer_id: %s\n    addrs:\n      - /dns4/%s/tcp/7400\n      - /dns4/%s/udp/7400/quic-v1\n' \
		"$n" "$id" "$n" "$n" >>"$CONS"
	sed -i "s#^tables_dir:.*#tables_dir: $TABLES#" "/nodes/$n/node.yaml"
	echo "http: 0.0.0.0:7480" >>"/nodes/$n/node.yaml"
done
for n in $NAMES; do cp "$CONS" "/nodes/$n/consortium.yaml"; done
# Trusted dealer: writes /nodes/NAME/keys/threshold.{pub,share}.
cohort keys deal --members "$(echo "$NAMES" | tr ' ' ',')" --bits 2048 --out /nodes
# The nodes run as the image's unprivileged user.
for n in $NAMES; do chown -R 10001 "/nodes/$n"; done
cat "$CONS"
