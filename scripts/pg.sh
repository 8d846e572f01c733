#!/usr/bin/env bash
# A throwaway PostgreSQL on loopback for the integration tests.
#
#   eval "$(scripts/pg.sh start)"    # prints export lines: CONVSEARCH_TEST_PG_URL, CONVSEARCH_TEST_PG_DIR
#   scripts/pg.sh stop               # stops the server in $CONVSEARCH_TEST_PG_DIR (or the dir given) and removes it
#
# start: installs postgresql with apt-get when no /usr/lib/postgresql/*/bin is found, initdb's a cluster in a
# fresh mktemp dir (never under /root: the postgres user could not enter it), starts it on 127.0.0.1 on a
# free port, creates a role and a database. Leftover clusters of earlier runs whose server is gone are removed
# first; a running one is left alone (it may be someone else's). Needs root (initdb runs as postgres via runuser)
# or to be run as the postgres user. Everything but the export lines goes to stderr.
set -euo pipefail

log() { echo "pg.sh: $*" >&2; }

pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

cleanup_stale() {
  local d pid
  for d in "${TMPDIR:-/tmp}"/convsearch-pg.*; do
    [ -d "$d" ] || continue
    pid=$(head -n 1 "$d/data/postmaster.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      continue
    fi
    log "removing stale cluster $d"
    rm -rf "$d"
  done
}

start() {
  local bin root port pw
  bin=$(pg_bin || true)
  if [ -z "$bin" ]; then
    log "PostgreSQL not found: apt-get install -y postgresql"
    [ "$(id -u)" = 0 ] || { log "need root to install PostgreSQL"; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true  # a stale mirror must not stop the install below
    apt-get install -y -qq postgresql >&2 </dev/null
    bin=$(pg_bin) || { log "postgresql installed but no initdb found"; exit 1; }
  fi
  cleanup_stale
  root=$(mktemp -d "${TMPDIR:-/tmp}/convsearch-pg.XXXXXX")
  chmod 755 "$root"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$root"
  port=$(free_port)
  pw=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
  as_pg "$bin/initdb" -D "$root/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 \
    --locale=C.UTF-8 >"$root/initdb.log" 2>&1 || { cat "$root/initdb.log" >&2; exit 1; }
  # fsync stays on: the durability test kills writers, and commits must mean what they say
  as_pg "$bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w -t 30 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $root -c max_connections=200" start >&2 \
    || { cat "$root/server.log" >&2; exit 1; }
  as_pg "$bin/psql" -h "$root" -p "$port" -U postgres -v ON_ERROR_STOP=1 -q \
    -c "CREATE ROLE convsearch LOGIN PASSWORD '$pw';" -c "CREATE DATABASE convsearch_test OWNER convsearch;" >&2
  log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $root)"
  echo "export CONVSEARCH_TEST_PG_DIR=$root"
  echo "export CONVSEARCH_TEST_PG_URL=postgresql://convsearch:$pw@127.0.0.1:$port/convsearch_test"
}

stop() {
  local root=${1:-${CONVSEARCH_TEST_PG_DIR:-}} bin
  if [ -z "$root" ] || [ ! -d "$root" ]; then
    log "nothing to stop"
    return 0
  fi
  case "$root" in
    "${TMPDIR:-/tmp}"/convsearch-pg.*) ;;
    *) log "refusing to remove $root (not a pg.sh cluster)"; return 1 ;;
  esac
  bin=$(pg_bin || true)
  if [ -f "$root/data/postmaster.pid" ]; then
    if [ -n "$bin" ]; then
      as_pg "$bin/pg_ctl" -D "$root/data" -m fast -w -t 30 stop >&2 || true
    fi
    local pid
    pid=$(head -n 1 "$root/data/postmaster.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$root"
  log "stopped and removed $root"
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
