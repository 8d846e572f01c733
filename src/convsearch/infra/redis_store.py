"""Redis behind our protocols (redis-py; ``pip install 'convsearch[redis]'``), so several server workers share
one web cache, one set of look-up counts and one outbound rate budget (``CONVSEARCH_CACHE_URL=redis://…``).

- ``RedisCache``: the ``TTLCache`` protocol; values are JSON; a key is ``convsearch:cache:<ns>:<key>`` with the
  entry's TTL as its Redis expiry (Redis drops it; nothing to sweep).
- ``RedisSeenCounter``: look-ups per key in a sorted set (score = time), trimmed to the window, atomically.
- ``RedisWindowStore``: the outbound limiter's sliding-window logs (one sorted set per upstream key, members are
  reserved slot times) and cool-downs, with the pick-the-earliest-key-and-reserve step in one Lua script, so
  two workers can never both take the last slot of a window; a call's entry moves to the time its answer came
  (``settle``). Times are wall-clock seconds (the workers share
  one machine clock, or NTP-synced ones).

A Redis that is down is a BackendError for the limiter (the call cannot be metered) and a miss for the cache
(the search goes ahead uncached), said in the trace.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from ..errors import BackendError, ConfigError
from . import turn

log = logging.getLogger("convsearch.infra.redis")

_RESERVE = """
local limit = tonumber(ARGV[1]); local window = tonumber(ARGV[2]); local now = tonumber(ARGV[3])
local member = ARGV[4]
local best_i, best_slot, best_n = -1, 0, 0
for i = 1, #KEYS, 2 do
  local log, cool = KEYS[i], KEYS[i + 1]
  redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
  local n = redis.call('ZCARD', log)
  local slot = now
  local c = tonumber(redis.call('GET', cool) or '0')
  if c > slot then slot = c end
  if n >= limit then
    local nth = redis.call('ZRANGE', log, n - limit, n - limit, 'WITHSCORES')
    local s = tonumber(nth[2]) + window
    if s > slot then slot = s end
  end
  if best_i < 0 or slot < best_slot or (slot == best_slot and n < best_n) then
    best_i, best_slot, best_n = (i - 1) / 2, slot, n
  end
end
if best_slot > now then return {best_i, tostring(best_slot), 0} end
local log = KEYS[best_i * 2 + 1]
redis.call('ZADD', log, now, member)
redis.call('PEXPIRE', log, math.ceil(window * 1000) + 60000)
return {best_i, tostring(now), 1}
"""

_SEEN = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000))
return redis.call('ZCARD', KEYS[1])
"""


def _redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise ConfigError("CONVSEARCH_CACHE_URL needs redis-py: pip install 'convsearch[redis]'") from exc
    return redis


class RedisCache:
    """``TTLCache`` in Redis. A Redis error is a miss (get) or nothing stored (set), noted in the trace."""

    def __init__(self, client: Any, *, prefix: str = "convsearch:cache") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> RedisCache:
        return cls(_redis().Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0), **kw)

    def _k(self, ns: str, key: str) -> str:
        return f"{self.prefix}:{ns}:{key}"

    def _down(self, exc: Exception) -> None:
        log.warning("redis cache unavailable: %s", type(exc).__name__)
        turn.note(f"cache unavailable (redis: {type(exc).__name__}): searched uncached")

    def get(self, ns: str, key: str) -> Any | None:
        try:
            raw = self.client.get(self._k(ns, key))
        except Exception as exc:  # noqa: BLE001 — redis-py raises many kinds; all mean "no cache now"
            self._down(exc)
            return None
        return None if raw is None else json.loads(raw)

    def set(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        if value is None or (ttl_s is not None and ttl_s <= 0):
            return
        try:
            self.client.set(self._k(ns, key), json.dumps(value, ensure_ascii=False),
                            px=None if ttl_s is None else max(1, int(ttl_s * 1000)))
        except Exception as exc:  # noqa: BLE001
            self._down(exc)

    def delete(self, ns: str, key: str) -> None:
        self.client.delete(self._k(ns, key))

    def clear(self, ns: str | None = None) -> None:
        pattern = f"{self.prefix}:{ns}:*" if ns is not None else f"{self.prefix}:*"
        for k in self.client.scan_iter(match=pattern, count=500):
            self.client.delete(k)

    # the async twins run the sync client in a worker thread: one client serves every event loop (a redis.asyncio
    # client is bound to the loop that first used it), and a slow Redis never blocks the loop
    async def aget(self, ns: str, key: str) -> Any | None:
        return await asyncio.to_thread(self.get, ns, key)

    async def aset(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        await asyncio.to_thread(self.set, ns, key, value, ttl_s)

    async def adelete(self, ns: str, key: str) -> None:
        await asyncio.to_thread(self.delete, ns, key)


class RedisSeenCounter:
    """``SeenCounter`` in Redis (shared by workers); a Redis error counts as a first look-up."""

    def __init__(self, client: Any, *, prefix: str = "convsearch:seen", clock: Any = None) -> None:
        import time

        self.client = client
        self.prefix = prefix
        self._clock = clock or time.time
        self._script = client.register_script(_SEEN)

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> RedisSeenCounter:
        return cls(_redis().Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0), **kw)

    def seen(self, ns: str, key: str, window_s: float) -> int:
        try:
            return int(self._script(keys=[f"{self.prefix}:{ns}:{key}"],
                                    args=[repr(self._clock()), window_s, uuid.uuid4().hex]))
        except Exception as exc:  # noqa: BLE001
            log.warning("redis seen counter unavailable: %s", type(exc).__name__)
            return 1


class RedisWindowStore:
    """The outbound limiter's ``WindowStore`` in Redis: every worker draws on the same per-key budget."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._script = client.register_script(_RESERVE)

    @classmethod
    def from_url(cls, url: str) -> RedisWindowStore:
        return cls(_redis().Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0))

    def reserve(self, keys: Sequence[str], limit: int, window_s: float, now: float,
                member: str = "") -> tuple[int, float, bool]:
        ks: list[str] = []
        for k in keys:
            ks += [f"{k}:log", f"{k}:cool"]
        try:
            i, slot, granted = self._script(keys=ks, args=[limit, repr(window_s), repr(now),
                                                           member or uuid.uuid4().hex])
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"the shared rate limiter (redis) is unavailable: {type(exc).__name__}") from exc
        return int(i), float(slot), bool(int(granted))

    def settle(self, key: str, member: str, at: float) -> None:
        try:
            self.client.zadd(f"{key}:log", {member: at}, xx=True, gt=True)
        except Exception as exc:  # noqa: BLE001
            log.warning("redis settle not stored: %s", type(exc).__name__)

    def cool(self, key: str, until: float) -> None:
        try:
            import time

            # expiry: the cool-down plus an hour (a stale value in the past is harmless; the clock the caller
            # uses for ``until`` need not be this one)
            ttl_ms = int(max(0.0, until - time.time()) * 1000) + 3_600_000
            # keep the later of two cool-downs: GET + SET is fine, a race only picks one of two resets
            old = self.client.get(f"{key}:cool")
            if old is None or float(old) < until:
                self.client.set(f"{key}:cool", repr(until), px=ttl_ms)
        except Exception as exc:  # noqa: BLE001
            log.warning("redis cool-down not stored: %s", type(exc).__name__)


__all__ = ["RedisCache", "RedisSeenCounter", "RedisWindowStore"]
