#!/usr/bin/env bash
# Runs a command (make test: pytest) with the suite's services up: PostgreSQL (history store) and Redis (shared
# web cache / outbound limiter), each started on loopback for this run and stopped after it, so that a developer's
# `make test` runs what CI runs. A service is left alone when its CONVSEARCH_TEST_*_URL is already set (.ci/run
# starts both itself, installing them when missing); one whose binaries are not on this machine is not installed
# here: one line says how to get it, and its tests skip (CI=true fails them instead).
#
#   bash scripts/test-services.sh .venv/bin/python -m pytest -n 2
set -uo pipefail
cd "$(dirname "$0")/.."

log() { echo "test-services: $*" >&2; }
started_pg="" started_redis=""
cleanup() {
  [ -n "$started_redis" ] && bash scripts/redis.sh stop "$started_redis" 2>/dev/null
  [ -n "$started_pg" ] && bash scripts/pg.sh stop "$started_pg" 2>/dev/null
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${CONVSEARCH_TEST_PG_URL:-}" ]; then
  if ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    if env=$(bash scripts/pg.sh start 2>/dev/null); then
      eval "$env"
      started_pg=$CONVSEARCH_TEST_PG_DIR
      log "PostgreSQL started for this run"
    else
      log "PostgreSQL is installed but did not start (see: bash scripts/pg.sh start): its tests skip"
    fi
  else
    log "no PostgreSQL here: its tests skip (get it: apt-get install postgresql, or set CONVSEARCH_TEST_PG_URL)"
  fi
fi
if [ -z "${CONVSEARCH_TEST_REDIS_URL:-}" ]; then
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    if env=$(bash scripts/redis.sh start 2>/dev/null); then
      eval "$env"
      started_redis=$CONVSEARCH_TEST_REDIS_DIR
      log "Redis started for this run"
    else
      log "Redis is installed but did not start (see: bash scripts/redis.sh start): its tests skip"
    fi
  else
    log "no Redis here: its tests skip (get it: apt-get install redis-server, or set CONVSEARCH_TEST_REDIS_URL)"
  fi
fi
if [ ! -x /usr/bin/chromium ]; then
  log "no Chromium: the playground's browser tests skip (get it: apt-get install chromium fonts-wqy-zenhei)"
fi

"$@"
