# pg.sh, sourced by the figure scripts: a throwaway PostgreSQL cluster on a
# Unix socket in a work dir, run as the postgres user when root (initdb
# refuses root), listening on no TCP port.
#
#   pgbin              the server's bin dir (empty when initdb is missing)
#   pg_start WORK      initdb and start it in WORK/pg (WORK must be 755 for
#                      the postgres user); exports COHORT_FIGURES_PG, its
#                      connection string
#   pg_stop WORK       stop it at once, if it was started (for a trap)
#   pg_work NAME       set work to a fresh dir /tmp/cohort-NAME-XXXXXX (755),
#                      stopped with pg_stop and deleted on exit
pg_asuser=()
if [ "$(id -u)" = 0 ]; then pg_asuser=(runuser -u postgres --); fi
pgbin=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -1)")" 2>/dev/null || true)

pg_start() {
  mkdir -p "$1/pg"
  if [ "$(id -u)" = 0 ]; then chown postgres "$1/pg"; fi
  "${pg_asuser[@]}" "$pgbin/initdb" -D "$1/pg" -U cohort --auth=trust -E UTF8 --no-sync >/dev/null
  "${pg_asuser[@]}" "$pgbin/pg_ctl" -D "$1/pg" -l "$1/pg/log" -w -o "-k $1/pg -c listen_addresses=''" start >/dev/null
  export COHORT_FIGURES_PG="host=$1/pg user=cohort dbname=postgres"
}

pg_stop() {
  if [ -f "$1/pg/PG_VERSION" ]; then "${pg_asuser[@]}" "$pgbin/pg_ctl" -D "$1/pg" -m immediate -w stop >/dev/null 2>&1 || true; fi
}

pg_work() {
  work=$(mktemp -d "/tmp/cohort-$1-XXXXXX")
  chmod 755 "$work"
  trap 'pg_stop "$work"; rm -rf "$work"' EXIT
}
