#!/usr/bin/env bash
# A throwaway Redis on loopback for the integration tests (shared web cache and outbound rate budget).
#
#   eval "$(scripts/redis.sh start)"   # prints export lines: CONVSEARCH_TEST_REDIS_URL, CONVSEARCH_TEST_REDIS_DIR
#   scripts/redis.sh stop              # stops the server of $CONVSEARCH_TEST_REDIS_DIR (or the dir given), removes it
#
# start: installs Debian's redis-server with apt-get when it is missing, starts it on 127.0.0.1 on a free port
# with no persistence, in a fresh mktemp dir, and waits until it answers PING. Everything but the export lines
# goes to stderr. stop: by the PID in that dir's pidfile, nothing else.
set -euo pipefail

log() { echo "redis.sh: $*" >&2; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local root port i
  if ! command -v redis-server >/dev/null; then
    log "redis-server not found: apt-get install -y redis-server"
    [ "$(id -u)" = 0 ] || { log "need root to install redis-server"; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    apt-get install -y -qq redis-server >&2 </dev/null
  fi
  root=$(mktemp -d "${TMPDIR:-/tmp}/convsearch-redis.XXXXXX")
  port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --save '' --appendonly no --dir "$root" \
    --pidfile "$root/redis.pid" --logfile "$root/redis.log" >&2
  for i in $(seq 1 100); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
      log "Redis $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port (dir $root)"
      echo "export CONVSEARCH_TEST_REDIS_DIR=$root"
      echo "export CONVSEARCH_TEST_REDIS_URL=redis://127.0.0.1:$port/0"
      return 0
    fi
    sleep 0.05
  done
  cat "$root/redis.log" >&2
  exit 1
}

stop() {
  local root=${1:-${CONVSEARCH_TEST_REDIS_DIR:-}} pid i
  if [ -z "$root" ] || [ ! -d "$root" ]; then
    log "nothing to stop"
    return 0
  fi
  case "$root" in
    "${TMPDIR:-/tmp}"/convsearch-redis.*) ;;
    *) log "refusing to remove $root (not a directory this script made)"; exit 1 ;;
  esac
  pid=$(cat "$root/redis.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
  rm -rf "$root"
  log "stopped and removed $root"
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "${1:-}" ;;
  *) echo "usage: $0 start|stop [dir]" >&2; exit 2 ;;
esac
